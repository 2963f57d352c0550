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

// PackedSequence's kernels (CompositeExplicitAutograd: no CUDA wrapper checks
// them) take its lengths and batch sizes on the host by contract.
bool packed_sequence_op(std::string_view key) {
  for (std::string_view op : {"_pack_padded_sequence", "_pack_padded_sequence.out",
                              "_pack_padded_sequence_backward", "_pad_packed_sequence"})
    if (key == op) return true;
  return false;
}

}  // namespace

ForeignOperands foreign_operand_rule(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  std::string key = name.name.substr(name.name.find("::") + 2);
  if (!name.overload_name.empty()) key += "." + name.overload_name;
  if (packed_sequence_op(key)) return ForeignOperands::Allowed;
  if (!ops_without_device_check().count(key)) return ForeignOperands::Refused;
  return op.hasTag(at::Tag::pointwise) ? ForeignOperands::ScalarsOnly : ForeignOperands::Allowed;
}

uint32_t host_returns(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  if (name.name == "aten::_pack_padded_sequence" || name.name == "aten::_pad_packed_sequence")
    return name.overload_name.empty() ? 1u << 1 : 0u;  // (data, batch_sizes), (padded, lengths)
  return 0;
}

void check_foreign_operand(ForeignOperands rule, const std::string& name, c10::DeviceIndex device,
                           const at::Tensor& t) {
  if (rule == ForeignOperands::Allowed) return;
  if (rule == ForeignOperands::ScalarsOnly && t.dim() == 0 && t.device().is_cpu()) return;
  throw Error(name + ": Expected all tensors to be on the same device, but found at least two devices, flagos:" +
              std::to_string(device) + " and " + t.device().str() + "!");
}

}  // namespace flagos::routes
