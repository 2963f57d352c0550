// The fused LSTM and GRU cells on flagos, composed of routed operators.
// torch's recurrent layers call _thnn_fused_{lstm,gru}_cell for every
// PrivateUse1 input (RNN.cpp), and only CUDA has kernels for them: the CPU
// route cannot serve them. These kernels keep the CUDA kernels' outputs; each
// backward reads the workspace its own forward wrote, whose layout is ours:
//   LSTM: [i, f, g, o] after their activations          (batch, 4 * hidden)
//   GRU:  [r, z, n, hx, hidden_gates' n chunk + bias]   (batch, 5 * hidden)
#include <ATen/ATen.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

namespace flagos::aten {
namespace {

at::Tensor with_bias(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  return bias && bias->defined() ? gates + *bias : gates;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates,
                                                         const at::Tensor& hidden_gates, const at::Tensor& cx,
                                                         const std::optional<at::Tensor>& input_bias,
                                                         const std::optional<at::Tensor>& hidden_bias) {
  const at::Tensor gates = with_bias(with_bias(input_gates + hidden_gates, input_bias), hidden_bias);
  auto chunks = gates.chunk(4, 1);
  const at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * cy.tanh();
  return {std::move(hy), std::move(cy), at::cat({i, f, g, o}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(const std::optional<at::Tensor>& grad_hy,
                                                                  const std::optional<at::Tensor>& grad_cy,
                                                                  const at::Tensor& cx, const at::Tensor& cy,
                                                                  const at::Tensor& workspace, bool has_bias) {
  auto w = workspace.chunk(4, 1);
  const at::Tensor &i = w[0], &f = w[1], &g = w[2], &o = w[3];
  const bool has_hy = grad_hy && grad_hy->defined();
  at::Tensor grad_c = grad_cy && grad_cy->defined() ? grad_cy->clone() : at::zeros_like(cx);
  at::Tensor grad_o = at::zeros_like(o);
  if (has_hy) {
    const at::Tensor tanh_cy = cy.tanh();
    grad_c = grad_c + *grad_hy * o * (1 - tanh_cy * tanh_cy);
    grad_o = *grad_hy * tanh_cy * o * (1 - o);
  }
  at::Tensor grad_gates =
      at::cat({grad_c * g * i * (1 - i), grad_c * cx * f * (1 - f), grad_c * i * (1 - g * g), grad_o}, 1);
  at::Tensor grad_cx = grad_c * f;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {std::move(grad_gates), std::move(grad_cx), std::move(grad_bias)};
}

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                            const at::Tensor& hx, const std::optional<at::Tensor>& input_bias,
                                            const std::optional<at::Tensor>& hidden_bias) {
  auto in = with_bias(input_gates, input_bias).chunk(3, 1);
  auto hid = with_bias(hidden_gates, hidden_bias).chunk(3, 1);
  const at::Tensor r = (in[0] + hid[0]).sigmoid(), z = (in[1] + hid[1]).sigmoid();
  const at::Tensor n = (in[2] + r * hid[2]).tanh();
  at::Tensor hy = n + z * (hx - n);
  return {std::move(hy), at::cat({r, z, n, hx, hid[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  auto w = workspace.chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &hn = w[4];
  const at::Tensor grad_n = grad_hy * (1 - z) * (1 - n * n);
  const at::Tensor grad_z = grad_hy * (hx - n) * z * (1 - z);
  const at::Tensor grad_r = grad_n * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({grad_r, grad_z, grad_n}, 1);
  at::Tensor grad_hidden_gates = at::cat({grad_r, grad_z, grad_n * r}, 1);
  at::Tensor grad_hx = grad_hy * z;
  at::Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {std::move(grad_input_gates), std::move(grad_hidden_gates), std::move(grad_hx),
          std::move(grad_input_bias), std::move(grad_hidden_bias)};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(lstm_cell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstm_cell_backward));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(gru_cell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(gru_cell_backward));
}

}  // namespace flagos::aten
