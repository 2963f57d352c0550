// scaled_dot_product_attention on flagos picks a fused kernel the way the
// interoperable device would. torch asks the PrivateUse1 `_fused_sdp_choice`
// dispatch stub; without one every call takes the math decomposition.
//   host-addressable plugins: the CPU choice (flash attention for CPU runs
//     through the cpu route);
//   CUDA-ABI plugins: the CUDA choice. cuDNN and memory-efficient attention
//     are called by torch for any device (and reach the cuda route); flash
//     attention is called for CUDA tensors only, so it is answered as
//     `overrideable`, implemented here by torch's CUDA flash kernels.
#include <ATen/ATen.h>
#include <ATen/SDPBackend.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

#include "device/runtime.h"
#include "routes/boxing.h"

namespace flagos::aten {
namespace {

using routes::BoxingTarget;

// CUDA-ABI memory is usable only when the installed torch has CUDA kernels
// (a CUDA-shaped plugin under a CPU build of torch has neither).
bool cuda_abi() {
  return device::device_count() > 0 && device::has_capability(0, FLAGOS_CAP_CUDA_ABI) &&
         c10::impl::hasDeviceGuardImpl(c10::kCUDA);
}
bool host_addressable() {
  return device::device_count() > 0 && device::has_capability(0, FLAGOS_CAP_HOST_ADDRESSABLE);
}

// The choice reads shapes, dtypes and requires_grad (a mask that needs a
// gradient rules out flash attention on CPU): the views carry the latter too.
// Under torch.compile's tracing the operands are fake or functional tensors
// without bytes: a stand-in of the target device with their geometry serves.
at::Tensor view_of(const at::Tensor& t, BoxingTarget target) {
  at::Tensor v;
  if (t.key_set().has_any(c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::Functionalize}))) {
    const auto cuda = static_cast<c10::DeviceIndex>(device::properties(t.device().index()).interop_device_index);
    v = at::empty({0}, t.options().device(target == BoxingTarget::Cpu ? c10::Device(c10::kCPU)
                                                                     : c10::Device(c10::kCUDA, cuda)));
    v.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides());
  } else {
    v = routes::boxed_view(t, target);
  }
  if (t.requires_grad()) v.requires_grad_(true);
  return v;
}

bool symbolic(const at::Tensor& t) { return t.unsafeGetTensorImpl()->has_symbolic_sizes_strides(); }

std::optional<at::Tensor> view_opt(const std::optional<at::Tensor>& t, BoxingTarget target) {
  if (!t || !t->defined()) return t;
  return view_of(*t, target);
}

int64_t fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                         std::optional<double> scale, bool enable_gqa) {
  const auto math = static_cast<int64_t>(at::SDPBackend::math);
  BoxingTarget target;
  c10::DeviceType type;
  if (cuda_abi()) {
    target = BoxingTarget::Cuda;
    type = c10::kCUDA;
  } else if (host_addressable()) {
    target = BoxingTarget::Cpu;
    type = c10::kCPU;
  } else {
    return math;  // the choice would need the CPU kernels' memory access
  }
  // Nested operands run on the CPU's nested kernels (nested_fallback.cpp),
  // which serve the math decomposition.
  if (q.is_nested() || k.is_nested() || v.is_nested()) return math;
  // A shape only known symbolically (dynamic shapes under compile): the math
  // decomposition, which every shape takes.
  if (symbolic(q) || symbolic(k) || symbolic(v) || (mask && mask->defined() && symbolic(*mask))) return math;
  // Under tracing a fake-tensor mode is active: stand-ins made through the
  // dispatcher would be fake too, and a fake CPU tensor's choice is its Meta
  // kernel's "math". The stand-ins and the choice run below Python dispatch.
  c10::impl::ExcludeDispatchKeyGuard no_python(
      c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot}));
  // The op (not the stub: DispatchStub's lookup is not callable from outside
  // libtorch) on views of the operands as CPU/CUDA tensors; no bytes are read.
  const int64_t choice = at::_fused_sdp_choice(view_of(q, target), view_of(k, target),
                                               view_of(v, target), view_opt(mask, target),
                                               dropout_p, is_causal, scale, enable_gqa);
  if (type == c10::kCUDA && choice == static_cast<int64_t>(at::SDPBackend::flash_attention)) {
    // torch pads the head dimension for CUDA flash only; we take unpadded shapes.
    const bool aligned = q.size(-1) % 8 == 0 && q.size(-1) == v.size(-1) && !(mask && mask->defined());
    return aligned ? static_cast<int64_t>(at::SDPBackend::overrideable)
                   : static_cast<int64_t>(at::SDPBackend::efficient_attention);
  }
  return choice;
}

using FlashOutputs = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt,
                                at::Tensor, at::Tensor, at::Tensor>;

FlashOutputs overrideable(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal,
                          bool return_debug_mask, std::optional<double> scale) {
  TORCH_CHECK(!(attn_bias && attn_bias->defined()),
              "[flagos] fused attention with an attention bias is not supported; torch should have "
              "chosen another backend");
  TORCH_CHECK(cuda_abi(), "[flagos] fused (overrideable) attention needs a CUDA-ABI plugin");
  // Dispatches on flagos tensors: the flash op is routed (cuda boxing).
  return at::_scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, scale);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> overrideable_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& cum_seq_q, const at::Tensor& cum_seq_k, c10::SymInt max_q,
    c10::SymInt max_k, double dropout_p, bool is_causal, const at::Tensor& philox_seed,
    const at::Tensor& philox_offset, std::optional<double> scale) {
  auto [gq, gk, gv] = at::_scaled_dot_product_flash_attention_backward_symint(
      grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, std::move(max_q), std::move(max_k), dropout_p,
      is_causal, philox_seed, philox_offset, scale);
  return {gq, gk, gv, at::Tensor()};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_scaled_dot_product_fused_attention_overrideable", TORCH_FN(overrideable));
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", TORCH_FN(overrideable_backward));
}

}  // namespace
}  // namespace flagos::aten

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &flagos::aten::fused_sdp_choice)
}  // namespace at::native
