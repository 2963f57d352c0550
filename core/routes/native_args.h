// Boxed arguments as the kernel extension's C descriptors. The builder owns
// every descriptor, shape and stride array for the duration of one call.
#pragma once

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <deque>
#include <vector>

#include "flagos/ext/kernels.h"

namespace flagos::routes {

class KernelArgs {
 public:
  // False when `v` cannot be carried (a non-flagos tensor, a Device, a
  // complex Scalar, ...): the call must take another route.
  bool add(const c10::IValue& v, const c10::Argument& arg, int32_t device);
  const std::vector<flagos_kernel_arg_t>& args() const { return args_; }

 private:
  const flagos_tensor_desc_t* describe(const at::Tensor& t, int32_t device);
  std::vector<flagos_kernel_arg_t> args_;
  std::deque<flagos_tensor_desc_t> descs_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<const flagos_tensor_desc_t*>> lists_;
  std::deque<std::string> strings_;
};

bool to_flagos_dtype(c10::ScalarType type, flagos_dtype_t* out);

}  // namespace flagos::routes
