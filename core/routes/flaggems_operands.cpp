#include "routes/flaggems_operands.h"

#include <ATen/ExpandUtils.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <optional>

#include "routes/boxed_args.h"

namespace flagos::routes {
namespace {

bool is_broadcast(const at::Tensor& t) {
  if (!t.defined() || t.layout() != c10::kStrided) return false;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1 && strides[d] == 0) return true;
  }
  return false;
}

// A device tensor a pointwise op broadcasts (0-dim and host ones are scalars).
bool is_broadcastable_operand(const c10::IValue& value) {
  return value.isTensor() && value.toTensor().defined() && value.toTensor().dim() > 0 &&
         !value.toTensor().is_cpu();
}

using Operands = c10::SmallVector<const at::Tensor*, 4>;

// Whether FlagGems takes its path for a pointwise op's operands of one
// layout: all of one shape, and all contiguous or all of one dense layout.
bool one_layout(const Operands& operands) {
  const at::Tensor& first = *operands.front();
  const auto all = [&](auto&& pred) { return std::all_of(operands.begin(), operands.end(), pred); };
  if (!all([&](const at::Tensor* t) { return t->sizes() == first.sizes(); })) return false;
  if (all([](const at::Tensor* t) { return t->is_contiguous(); })) return true;
  return first.unsafeGetTensorImpl()->is_non_overlapping_and_dense() &&
         all([&](const at::Tensor* t) { return t->strides() == first.strides(); });
}

std::optional<c10::DimVector> broadcast_shape(const Operands& operands) {
  c10::DimVector shape;
  for (const at::Tensor* t : operands) {
    try {
      shape = at::infer_size_dimvector(shape, t->sizes());
    } catch (const c10::Error&) {
      return std::nullopt;
    }
  }
  return shape;
}

// The shape to make a pointwise op's read-only operands contiguous at: the
// shape all its operands broadcast to (an in-place op's is its self's), when
// two or more of them would not take FlagGems' one-layout path; that of the
// read-only ones when an out= of another size, which the op resizes, is in
// the way. None when no copy is needed or they do not broadcast.
std::optional<c10::DimVector> shape_to_make_plain(const std::vector<c10::Argument>& schema,
                                                  c10::ArrayRef<c10::IValue> args) {
  Operands operands, read_only;  // pointers into `args`, which outlives them
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_broadcastable_operand(args[i])) continue;
    operands.push_back(&args[i].toTensor());
    if (schema[i].alias_info() == nullptr) read_only.push_back(&args[i].toTensor());
  }
  if (operands.size() < 2 || one_layout(operands)) return std::nullopt;
  if (auto shape = broadcast_shape(operands)) return shape;
  return read_only.empty() ? std::nullopt : broadcast_shape(read_only);
}

}  // namespace

void plain_operands(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const size_t first = stack->size() - args.size();
  const auto shape = op.hasTag(at::Tag::pointwise)
                         ? shape_to_make_plain(args, c10::ArrayRef<c10::IValue>(*stack).slice(first))
                         : std::nullopt;
  const std::vector<bool>& writes = written_arguments(op);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].alias_info() != nullptr || writes[i]) continue;  // a copy would lose the writes
    c10::IValue& value = (*stack)[first + i];
    if (shape && is_broadcastable_operand(value)) {
      const at::Tensor& t = value.toTensor();
      if (t.sizes() != c10::IntArrayRef(*shape) || !t.is_contiguous()) value = t.expand(*shape).contiguous();
    } else if (value.isTensor()) {
      if (is_broadcast(value.toTensor())) value = value.toTensor().contiguous();
    } else if (value.isTensorList()) {
      auto list = value.toTensorList();
      if (std::none_of(list.begin(), list.end(), [](const at::Tensor& t) { return is_broadcast(t); })) continue;
      c10::List<at::Tensor> compacted;
      compacted.reserve(list.size());
      for (const at::Tensor& t : list) compacted.push_back(is_broadcast(t) ? t.contiguous() : t);
      value = std::move(compacted);
    }
  }
}

}  // namespace flagos::routes
