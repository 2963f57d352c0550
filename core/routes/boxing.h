// Boxing: run the installed torch's own kernels for another dispatch key on
// flagos memory, zero-copy (docs/architecture.md, "Routing").
//
// Operands are presented as tensors of the target device type over the same
// bytes (boxing_call.h); the kernel runs; results come back as flagos tensors: view
// results onto the operand's flagos storage, fresh results re-labelled in
// place (their memory stays where the kernel allocated it), anything else
// copied. Two targets:
//   cpu   host-addressable plugins. The kernel runs now on the host, so the
//         device's queued work is waited for first, and CPU allocations made
//         by the kernel come from the flagos allocator (HostAllocationScope).
//   cuda  CUDA-ABI plugins. The kernel is launched on the flagos current
//         stream (made torch's current CUDA stream for the call): no
//         synchronisation, no null-stream launch. Its allocations come from
//         torch's CUDA caching allocator (reported beside flagos memory).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/FunctionRef.h>

#include <optional>

#include "routes/boxing_call.h"
#include "routes/boxing_plan.h"

namespace flagos::routes {

// Boxes the stack's operands for `target`, runs `invoke` on it, unboxes.
// `plan` is the called op's (boxing_plan.h). `recycle_aliases`: as for
// BoxingCall (false when `invoke` may hand the operands to Python).
void run_boxed(BoxingTarget target, const BoxingPlan& plan, torch::jit::Stack* stack,
               c10::function_ref<void(torch::jit::Stack*)> invoke, bool recycle_aliases = true);

// A view of flagos tensor `t` as a tensor of `target`'s device type (same
// bytes, no copy). For metadata-only uses (shape/dtype checks) it is safe on
// any plugin; reading it needs the target's memory capability.
at::Tensor boxed_view(const at::Tensor& t, BoxingTarget target);

// The stock device whose kernels can run on `device`'s memory: cuda for
// CUDA-ABI plugins (when this torch has CUDA), cpu for host-addressable ones,
// none otherwise (the strict host plugin: its memory is not readable).
std::optional<BoxingTarget> stock_target(c10::DeviceIndex device);

// The cpu and cuda routes: run_boxed + the target key's kernel.
void cpu_boxing(const c10::OperatorHandle& op, const BoxingPlan& plan, torch::jit::Stack* stack);
void cuda_boxing(const c10::OperatorHandle& op, const BoxingPlan& plan, torch::jit::Stack* stack);

}  // namespace flagos::routes
