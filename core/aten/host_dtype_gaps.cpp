#include "aten/host_dtype_gaps.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

namespace flagos::aten {
namespace {

// histc: CUDA takes every integral type and answers in it; the CPU only
// floating types. double holds every int32 exactly and int64 up to 2^53,
// and the counts are integers below the element count.
bool histc(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const bool out_variant = op.schema().overload_name() == "out";
  const size_t num_args = out_variant ? 5 : 4;
  auto first = stack->end() - static_cast<std::ptrdiff_t>(num_args);
  const at::Tensor self = first[0].toTensor();
  if (!c10::isIntegralType(self.scalar_type(), /*includeBool=*/false)) return false;
  const int64_t bins = first[1].toInt();
  const at::Scalar min = first[2].toScalar(), max = first[3].toScalar();
  at::Tensor counts = at::histc(self.to(at::kDouble), bins, min, max);
  at::Tensor result;
  if (out_variant) {
    result = first[4].toTensor();
    at::native::resize_output(result, counts.sizes());
    result.copy_(counts);
  } else {
    result = counts.to(self.scalar_type());
  }
  torch::jit::drop(*stack, num_args);
  stack->emplace_back(std::move(result));
  return true;
}

}  // namespace

bool run_in_wider_dtype(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  // Handle comparisons, not names: every call of the cpu routes passes here.
  static const c10::OperatorHandle histc_op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::histc", "");
  static const c10::OperatorHandle histc_out = c10::Dispatcher::singleton().findSchemaOrThrow("aten::histc", "out");
  if (op == histc_op || op == histc_out) return histc(op, stack);
  return false;
}

}  // namespace flagos::aten
