// Autocast for flagos (torch.autocast("flagos", dtype=float16|bfloat16)).
// Boxed kernels resolved by operator name at load time, so one source serves
// every torch minor: an operator this torch lacks is skipped, not a build
// error. Policies follow torch's CUDA lists: matmul-like operators run in the
// autocast dtype, numerically sensitive ones in float32, mixed-input ones in
// the widest floating dtype present.
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <initializer_list>
#include <string>

namespace flagos::aten {
namespace {

constexpr auto kAutocastKey = c10::DispatchKey::AutocastPrivateUse1;

bool eligible(const at::Tensor& t) {
  return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1 &&
         t.is_floating_point() && t.scalar_type() != at::kDouble;
}

// torch's cached_cast: a float32 leaf that requires grad (a weight) is cast
// once per autocast region, like on CUDA and CPU.
at::Tensor cast(const at::Tensor& t, at::ScalarType dtype) {
  return at::autocast::cached_cast(dtype, t, c10::DeviceType::PrivateUse1);
}

void cast_tensors(torch::jit::Stack* stack, size_t num_args, at::ScalarType dtype) {
  for (auto it = stack->end() - num_args; it != stack->end(); ++it) {
    if (it->isTensor()) {
      const at::Tensor& t = it->toTensor();
      if (eligible(t)) *it = cast(t, dtype);
    } else if (it->isTensorList()) {
      c10::List<at::Tensor> out;
      for (const at::Tensor& t : it->toTensorList()) out.push_back(eligible(t) ? cast(t, dtype) : t);
      *it = out;
    }
  }
}

void run_without_autocast(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(kAutocastKey);
  op.callBoxed(stack);
}

void lower_precision(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto dtype = at::autocast::get_autocast_dtype(at::kPrivateUse1);
  cast_tensors(stack, op.schema().arguments().size(), dtype);
  run_without_autocast(op, stack);
}

void full_precision(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  cast_tensors(stack, op.schema().arguments().size(), at::kFloat);
  run_without_autocast(op, stack);
}

void promote(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  at::ScalarType widest = at::autocast::get_autocast_dtype(at::kPrivateUse1);
  bool any = false;
  for (auto it = stack->end() - n; it != stack->end(); ++it) {
    auto visit = [&](const at::Tensor& t) {
      if (!eligible(t)) return;
      widest = any ? at::promote_types(widest, t.scalar_type()) : t.scalar_type();
      any = true;
    };
    if (it->isTensor()) visit(it->toTensor());
    if (it->isTensorList())
      for (const at::Tensor& t : it->toTensorList()) visit(t);
  }
  if (any) cast_tensors(stack, n, widest);
  run_without_autocast(op, stack);
}

const std::initializer_list<const char*> kLowerPrecision = {
    "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc",
    "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "convolution",
    "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot",
    "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
    "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell",
    "rnn_relu_cell", "scaled_dot_product_attention"};

const std::initializer_list<const char*> kFullPrecision = {
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar",
    "softplus", "layer_norm", "native_layer_norm", "group_norm", "frobenius_norm.dim",
    "nuclear_norm", "nuclear_norm.dim", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss", "kl_div",
    "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
    "linalg_vector_norm", "linalg_matrix_norm", "sum", "sum.dim_IntList", "cross_entropy_loss"};

const std::initializer_list<const char*> kPromote = {
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler",
    "index_put", "scatter_add", "tensordot", "cat", "stack"};

void register_list(torch::Library& lib, std::initializer_list<const char*> names,
                   torch::CppFunction (*make)()) {
  for (const char* name : names) {
    std::string full = name;
    const auto dot = full.find('.');
    c10::OperatorName op_name("aten::" + full.substr(0, dot),
                              dot == std::string::npos ? "" : full.substr(dot + 1));
    if (!c10::Dispatcher::singleton().findSchema(op_name)) continue;  // not in this torch
    lib.impl(name, make());
  }
}

template <void (*Fn)(const c10::OperatorHandle&, torch::jit::Stack*)>
torch::CppFunction boxed() {
  return torch::CppFunction::makeFromBoxedFunction<Fn>();
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

[[maybe_unused]] const bool registered = [] {
  static torch::Library lib(torch::Library::IMPL, "aten", kAutocastKey, __FILE__, __LINE__);
  register_list(lib, kLowerPrecision, &boxed<&lower_precision>);
  register_list(lib, kFullPrecision, &boxed<&full_precision>);
  register_list(lib, kPromote, &boxed<&promote>);
  return true;
}();

}  // namespace
}  // namespace flagos::aten
