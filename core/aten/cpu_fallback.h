// The cpu_fallback route: run the CPU kernel of any operator on host
// mirrors of its flagos operands, then write mutated operands back and move
// results to the device. Correct for views (results alias the device
// storage), in-place, out= (including resized outs) and mutated tensor
// lists; random operators draw from the flagos generator.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace flagos::aten {

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace flagos::aten
