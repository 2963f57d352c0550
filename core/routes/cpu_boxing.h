// The `cpu` route: run the installed torch's CPU kernel directly on flagos
// memory (plugins that declare FLAGOS_CAP_HOST_ADDRESSABLE). Operands are
// presented as CPU tensors aliasing the same bytes; outputs the kernel
// allocates come from the flagos allocator (HostAllocationScope) and are
// re-labelled as flagos tensors; view results map back onto the operand's
// flagos storage. Nothing is copied except results a kernel produced in
// ordinary CPU memory.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace flagos::routes {

void cpu_boxing(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace flagos::routes
