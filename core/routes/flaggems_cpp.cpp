#include "routes/flaggems_cpp.h"

#include <string_view>
#include <utility>

namespace flagos::routes {
namespace {

// ATen operators FlagGems' C++ runtime registers under a name of its own.
constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
    {"_softmax", "softmax"},
    {"_softmax_backward_data", "softmax_backward"},
};

// FlagGems operators the route never takes: their results are wrong.
// FlagGems 5.0.2's C++ softmax and softmax_backward run one 128-column tile
// per row (TILE_N 128 with ONE_TILE_PER_CTA), so longer rows are wrong; seen
// against torch's softmax on an H200 (tools/bench/flaggems_cpp.py).
constexpr std::string_view kWrong[] = {"softmax", "softmax_backward"};

std::string flaggems_name(const std::string& name) {
  const size_t dot = name.find('.');
  const std::string base = name.substr(0, dot);
  for (const auto& [aten, ours] : kRenamed)
    if (base == aten) return std::string(ours) + (dot == std::string::npos ? "" : name.substr(dot));
  return name;
}

// A boxed call hands the operands over by position: the types, in order,
// must agree (names may differ), and so must the returns.
bool same_signature(const c10::FunctionSchema& a, const c10::FunctionSchema& b) {
  if (a.arguments().size() != b.arguments().size() || a.returns().size() != b.returns().size()) return false;
  for (size_t i = 0; i < a.arguments().size(); ++i)
    if (*a.arguments()[i].type() != *b.arguments()[i].type()) return false;
  for (size_t i = 0; i < a.returns().size(); ++i)
    if (*a.returns()[i].type() != *b.returns()[i].type()) return false;
  return true;
}

}  // namespace

std::optional<c10::OperatorHandle> flaggems_cpp_operator(const c10::OperatorHandle& op, const std::string& name,
                                                         c10::DispatchKey key) {
  const std::string theirs = flaggems_name(name);
  const size_t dot = theirs.find('.');
  for (std::string_view wrong : kWrong)
    if (theirs.substr(0, dot) == wrong) return std::nullopt;
  const c10::OperatorName wanted("flag_gems::" + theirs.substr(0, dot),
                                 dot == std::string::npos ? "" : theirs.substr(dot + 1));
  auto found = c10::Dispatcher::singleton().findSchema(wanted);
  if (!found || !found->hasKernelForDispatchKey(key)) return std::nullopt;
  if (!same_signature(op.schema(), found->schema())) return std::nullopt;
  return found;
}

}  // namespace flagos::routes
