// Operands that are not flagos tensors (a CPU tensor beside flagos ones),
// judged as native CUDA judges them, so that a user's device bug raises on
// flagos too. torch's generated CUDA wrappers require every tensor on one
// device, except for operators marked `device_check: NoCheck`, which check
// for themselves: TensorIterator's pointwise ones accept 0-dim CPU tensors,
// the others (copies, indexing with host indices, ...) take what they take;
// so do PackedSequence's, whose lengths and batch sizes live on the host.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace flagos::routes {

enum class ForeignOperands : uint8_t {
  Refused,      // every tensor on the flagos device (Python scalars aside)
  ScalarsOnly,  // 0-dim CPU tensors too (TensorIterator's rule)
  Allowed,      // the kernel decides
};

ForeignOperands foreign_operand_rule(const c10::OperatorHandle& op);

// Throws flagos::Error in torch's words ("Expected all tensors to be on the
// same device") when `t`, a non-flagos operand of `op` (named `name`) run on
// flagos device `device`, breaks `rule`.
void check_foreign_operand(ForeignOperands rule, const std::string& name, c10::DeviceIndex device,
                           const at::Tensor& t);

// Returns that live on the host by contract, as on native CUDA, where the
// kernel makes them there from host operands (PackedSequence's batch sizes
// and lengths, which torch requires on the CPU): bit r set, return r stays
// a CPU tensor. 0 for every other operator.
uint32_t host_returns(const c10::OperatorHandle& op);
inline bool stays_on_host(uint32_t host_returns, size_t r) { return r < 32 && (host_returns >> r) & 1; }

// The operand a rule is checked against, of those seen: a non-flagos tensor
// that is not a Python scalar, one of more than 0 dimensions first.
inline void note_foreign_operand(at::Tensor& worst, const at::Tensor& t) {
  if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return;
  if (!worst.defined() || (worst.dim() == 0 && t.dim() > 0)) worst = t;
}

}  // namespace flagos::routes
