#include "routes/boxed_args.h"

#include "device/runtime.h"

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

}  // namespace flagos::routes
