// The operators that take the boxing route through a typed kernel
// (typed_boxing.h): the ones a transformer's training step and inference
// call most, where the boxed route's per-call cost shows. Any other operator
// routed to boxing keeps the boxed kernel; both behave alike.
#pragma once

#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "routes/boxing_call.h"

namespace flagos::routes {

// The typed kernel of routing name `op` ("add.Tensor") for `target`, or none
// when `op` has none or its schema differs from this torch's (one warning).
// `log_line`, when not empty, is written to the log at the kernel's first
// call (FLAGOS_LOG=dispatch), as the boxed kernel does. Call once per
// operator, at install.
std::optional<torch::CppFunction> typed_boxing_kernel(const std::string& op, BoxingTarget target,
                                                      const std::string& log_line);

// The routing names of the operators with a typed kernel (for tests and tools).
std::vector<std::string> typed_boxing_ops();

// Why a typed kernel compiled from `compiled` (at::_ops::<op>::schema_str of
// the torch built against, "mm(Tensor self, Tensor mat2) -> Tensor") cannot
// serve this torch's aten::<op>; "" when both schemas are the same. A kernel
// with another signature would read its arguments wrongly: typed_boxing_kernel
// then gives none, and the boxed route serves the operator.
std::string typed_schema_mismatch(const std::string& compiled);

// _to_copy on `self`'s own device, by the target's kernel (aten/copy.cpp's
// same-device casts: autocast makes hundreds per training step).
at::Tensor typed_to_copy(BoxingTarget target, const at::Tensor& self, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory, bool non_blocking,
                         std::optional<at::MemoryFormat> memory_format);

// dst.copy_(src) by the target's own copy kernel on the operands' bytes:
// dtype conversion, strides, broadcast and conjugate/negative bits without
// a host round trip. Both tensors are flagos tensors on `dst`'s device.
void typed_copy(BoxingTarget target, const at::Tensor& dst, const at::Tensor& src);

}  // namespace flagos::routes
