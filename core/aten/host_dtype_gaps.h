// Operators whose CUDA kernels take dtypes their CPU kernels do not. Code
// written for CUDA relies on them (transformers' mixture-of-experts routing
// calls histc on int32 expert ids on every device but the CPU), so the
// cpu and cpu_fallback routes run them on the CPU in a wider dtype and casts the
// result back, exactly where the wider dtype holds every input value.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace flagos::aten {

// Runs `op` on the host operands on `stack` (as the CPU kernel would, the
// results left on it) and returns true when it is one of these operators
// with a dtype the CPU lacks; false, with the stack untouched, otherwise.
bool run_in_wider_dtype(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The CPU kernel of `op` on the host operands on `stack`, through
// run_in_wider_dtype where it applies: what the cpu and cpu_fallback routes call.
inline void run_cpu_kernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (!run_in_wider_dtype(op, stack)) op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

}  // namespace flagos::aten
