// The operands the `flaggems` route hands to FlagGems, in the form its
// kernels read right. FlagGems 5.0.2 on Hopper (Triton 3.6) gets a `mul` of
// operands of mixed layouts wrong, natively too (a transposed one beside a
// contiguous one, a (64, 1) column against (64, 256), an expanded one): its
// Hopper functions index operands flat. Other kernels have ignored zero
// strides (FlagGems #2307, upstream torch_fl #349). Wrongs of single
// functions are wrapped in Python instead (torch_fl/_flaggems_fixes.py);
// python -m tools.dev.flaggems_layouts shows which layouts a FlagGems gets right
// (docs/platforms/cuda.md, known limits).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace flagos::routes {

// Replaces, in place on `stack` (the op's arguments at its top), the
// operands `op`'s schema neither writes nor aliases (a view's input must stay
// the tensor its result aliases):
//  - a pointwise op's (at::Tag::pointwise) device operands of one or more
//    dimensions, when two or more of them (written ones included) differ in
//    shape or layout: each by a contiguous copy at the shape they broadcast
//    to (an out= of another size left out of it), so that FlagGems takes its
//    path for operands of one layout (its result is then contiguous where
//    torch's may follow an operand's layout);
//  - any other tensor, or tensor in a list, that a broadcast made (a zero
//    stride on a dimension longer than 1: x.expand(...), autograd's gradient
//    of a sum): by a contiguous copy.
// Operands the op writes (in place, out=), 0-dim and host ones stay as they
// are. The copies are made through the dispatcher, on the current stream of
// their device; they live as long as the stack holds them. Throws what a copy
// throws (out of memory).
void plain_operands(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace flagos::routes
