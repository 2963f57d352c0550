#include "routes/boxed_args.h"

#include <torch/csrc/utils/schema_info.h>

#include <mutex>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "device/runtime.h"
#include "error.h"

namespace flagos::routes {

std::optional<c10::DeviceIndex> find_device(const c10::IValue* args, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    std::optional<c10::DeviceIndex> found;
    for_each_tensor(args[i], [&](const at::Tensor& t) {
      if (!found && is_flagos(t)) found = t.device().index();
    });
    if (found) return found;
  }
  for (size_t i = 0; i < n; ++i) {
    if (args[i].isDevice() && args[i].toDevice().type() == c10::DeviceType::PrivateUse1)
      return args[i].toDevice().has_index() ? args[i].toDevice().index()
                                            : static_cast<c10::DeviceIndex>(device::current_device());
  }
  return std::nullopt;
}

bool is_generator_arg(const c10::Argument& arg) {
  c10::TypePtr type = arg.type();
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  return type->kind() == c10::TypeKind::GeneratorType;
}

bool draws_from_default_generator(const c10::OperatorHandle& op) {
  if (!op.hasTag(at::Tag::nondeterministic_seeded)) return false;
  for (const auto& arg : op.schema().arguments())
    if (is_generator_arg(arg)) return false;
  return true;
}

int dropout_argument(const c10::OperatorHandle& op) {
  if (!op.hasTag(at::Tag::nondeterministic_seeded)) return -1;
  const auto& args = op.schema().arguments();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name() == "dropout_p" && args[i].type()->kind() == c10::TypeKind::FloatType) return static_cast<int>(i);
  return -1;
}

int written_argument(const c10::FunctionSchema& schema, size_t ret) {
  const c10::AliasInfo* info = schema.returns()[ret].alias_info();
  if (!info) return -1;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::AliasInfo* a = schema.arguments()[i].alias_info();
    if (!a) continue;
    for (const auto& set : info->beforeSets())
      if (a->beforeSets().count(set)) return a->isWrite() ? static_cast<int>(i) : -1;
  }
  return -1;
}

void require_strided_result(const std::string& op, const at::Tensor& result) {
  if (!result.defined() || (result.layout() == c10::kStrided && !result.is_quantized())) return;
  std::ostringstream layout;
  layout << result.layout();
  std::string name = layout.str();
  if (result.layout() == c10::kSparse) name = "sparse COO";
  else if (result.is_sparse_csr()) name = "compressed sparse";
  else if (result.layout() == c10::kMkldnn) name = "mkldnn";
  else if (result.is_quantized()) name = "quantized";
  throw Error(op + " returns a " + name + " tensor, and flagos tensors are plain strided ones "
              "(docs/platforms/README.md, \"Layouts\"): run it on a CPU tensor instead");
}

namespace {

// Kernels that write arguments neither their schema nor torch's SchemaInfo
// marks as written.
bool written_without_annotation(const c10::FunctionSchema& schema, const c10::Argument& arg) {
  if (schema.name() == "aten::batch_norm_update_stats")
    return arg.name() == "running_mean" || arg.name() == "running_var";
  return false;
}

std::vector<bool> find_written_arguments(const c10::FunctionSchema& schema) {
  torch::utils::SchemaInfo info(schema);
  std::vector<bool> written(schema.arguments().size());
  for (size_t i = 0; i < written.size(); ++i) {
    const c10::Argument& arg = schema.arguments()[i];
    // Without argument values, SchemaInfo answers conservatively: a training
    // op's statistics count as written whatever its `training` flag.
    written[i] = (arg.alias_info() && arg.alias_info()->isWrite()) ||
                 info.is_mutable(c10::SchemaArgument(c10::SchemaArgType::input, i)) ||
                 written_without_annotation(schema, arg);
  }
  return written;
}

}  // namespace

const std::vector<bool>& written_arguments(const c10::OperatorHandle& op) {
  static std::mutex mutex;
  static std::unordered_map<const c10::FunctionSchema*, std::vector<bool>> cache;
  const c10::FunctionSchema& schema = op.schema();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(&schema);
  if (it == cache.end()) it = cache.emplace(&schema, find_written_arguments(schema)).first;
  return it->second;
}

}  // namespace flagos::routes
