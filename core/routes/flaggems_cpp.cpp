#include "routes/flaggems_cpp.h"

namespace flagos::routes {
namespace {

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
  // Matched by name only: FlagGems' C++ `softmax` and `softmax_backward`
  // (its forms of _softmax and _softmax_backward_data) stay unmatched on
  // purpose. FlagGems 5.0.2's run one 128-column tile per row (TILE_N 128
  // with ONE_TILE_PER_CTA), so longer rows come out wrong; seen against
  // torch's softmax on an H200 (tools/bench/flaggems_cpp.py).
  const size_t dot = name.find('.');
  const c10::OperatorName wanted("flag_gems::" + name.substr(0, dot),
                                 dot == std::string::npos ? "" : name.substr(dot + 1));
  auto found = c10::Dispatcher::singleton().findSchema(wanted);
  if (!found || !found->hasKernelForDispatchKey(key)) return std::nullopt;
  if (!same_signature(op.schema(), found->schema())) return std::nullopt;
  return found;
}

}  // namespace flagos::routes
