// Strided nested tensors on flagos (nested_fallback.cpp): operators that
// dispatch on NestedTensorPrivateUse1 run torch's CPU nested kernels on host
// copies of the nested storage.
#pragma once

#include <ATen/core/Tensor.h>

namespace flagos::aten {

// A copy of the CPU nested tensor `host` on the flagos device `where`: its
// whole storage, with the same size, stride and offset metadata. For a dense
// operator whose CPU kernel makes a nested tensor (_nested_from_padded).
at::Tensor nested_to_device(const at::Tensor& host, c10::Device where);

}  // namespace flagos::aten
