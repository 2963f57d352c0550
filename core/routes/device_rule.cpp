#include "routes/device_rule.h"


#include <string_view>
#include <unordered_set>

#include "error.h"

namespace flagos::routes {
namespace {

// Written at build time from the installed torch's native_functions.yaml.
const std::unordered_set<std::string_view>& ops_without_device_check() {
  static const std::unordered_set<std::string_view> ops = {
#include "device_check_ops.inc"
  };
  return ops;
}

}  // namespace

ForeignOperands foreign_operand_rule(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  std::string key = name.name.substr(name.name.find("::") + 2);
  if (!name.overload_name.empty()) key += "." + name.overload_name;
  if (!ops_without_device_check().count(key)) return ForeignOperands::Refused;
  return op.hasTag(at::Tag::pointwise) ? ForeignOperands::ScalarsOnly : ForeignOperands::Allowed;
}

void check_foreign_operand(ForeignOperands rule, const std::string& name, c10::DeviceIndex device,
                           const at::Tensor& t) {
  if (rule == ForeignOperands::Allowed) return;
  if (rule == ForeignOperands::ScalarsOnly && t.dim() == 0 && t.device().is_cpu()) return;
  throw Error(name + ": Expected all tensors to be on the same device, but found at least two devices, flagos:" +
              std::to_string(device) + " and " + t.device().str() + "!");
}

}  // namespace flagos::routes
