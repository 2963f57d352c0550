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
// them) take its lengths and batch sizes on the host by contract, and return
// them there: (data, batch_sizes), (padded, lengths).
struct PackedSequenceOp {
  std::string_view key;
  uint32_t host_returns;
};
constexpr PackedSequenceOp kPackedSequenceOps[] = {
    {"_pack_padded_sequence", 1u << 1},
    {"_pack_padded_sequence.out", 0},
    {"_pack_padded_sequence_backward", 0},
    {"_pad_packed_sequence", 1u << 1},
};

// "add.Tensor" for aten::add.Tensor.
std::string op_key(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  std::string key = name.name.substr(name.name.find("::") + 2);
  if (!name.overload_name.empty()) key += "." + name.overload_name;
  return key;
}

const PackedSequenceOp* packed_sequence_op(std::string_view key) {
  for (const PackedSequenceOp& op : kPackedSequenceOps)
    if (op.key == key) return &op;
  return nullptr;
}

}  // namespace

ForeignOperands foreign_operand_rule(const c10::OperatorHandle& op) {
  const std::string key = op_key(op);
  if (packed_sequence_op(key)) return ForeignOperands::Allowed;
  if (!ops_without_device_check().count(key)) return ForeignOperands::Refused;
  return op.hasTag(at::Tag::pointwise) ? ForeignOperands::ScalarsOnly : ForeignOperands::Allowed;
}

uint32_t host_returns(const c10::OperatorHandle& op) {
  const PackedSequenceOp* packed = packed_sequence_op(op_key(op));
  return packed ? packed->host_returns : 0;
}

void check_foreign_operand(ForeignOperands rule, const std::string& name, c10::DeviceIndex device,
                           const at::Tensor& t) {
  if (rule == ForeignOperands::Allowed) return;
  if (rule == ForeignOperands::ScalarsOnly && t.dim() == 0 && t.device().is_cpu()) return;
  throw Error(name + ": Expected all tensors to be on the same device, but found at least two devices, flagos:" +
              std::to_string(device) + " and " + t.device().str() + "!");
}

}  // namespace flagos::routes
