#include "routes/typed_boxing_ops.h"

#include <ATen/ops/_foreach_add_ops.h>
#include <ATen/ops/_foreach_addcdiv_ops.h>
#include <ATen/ops/_foreach_addcmul_ops.h>
#include <ATen/ops/_foreach_div_ops.h>
#include <ATen/ops/_foreach_lerp_ops.h>
#include <ATen/ops/_foreach_mul_ops.h>
#include <ATen/ops/_foreach_norm_ops.h>
#include <ATen/ops/_foreach_sqrt_ops.h>
#include <ATen/ops/_foreach_sub_ops.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_safe_softmax_ops.h>
#include <ATen/ops/_scaled_dot_product_cudnn_attention_backward_ops.h>
#include <ATen/ops/_scaled_dot_product_cudnn_attention_ops.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention_backward_ops.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention_ops.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_backward_ops.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward_ops.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_ops.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/_to_copy_ops.h>
#include <ATen/ops/_unsafe_view_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/all_ops.h>
#include <ATen/ops/argmax_ops.h>
#include <ATen/ops/baddbmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/cat_ops.h>
#include <ATen/ops/clone_ops.h>
#include <ATen/ops/constant_pad_nd_ops.h>
#include <ATen/ops/copy_ops.h>
#include <ATen/ops/cumsum_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/embedding_dense_backward_ops.h>
#include <ATen/ops/embedding_ops.h>
#include <ATen/ops/eq_ops.h>
#include <ATen/ops/exp_ops.h>
#include <ATen/ops/fill_ops.h>
#include <ATen/ops/gelu_backward_ops.h>
#include <ATen/ops/gelu_ops.h>
#include <ATen/ops/index_select_ops.h>
#include <ATen/ops/masked_fill_ops.h>
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/native_dropout_backward_ops.h>
#include <ATen/ops/native_dropout_ops.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/native_layer_norm_ops.h>
#include <ATen/ops/ne_ops.h>
#include <ATen/ops/neg_ops.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/nll_loss_forward_ops.h>
#include <ATen/ops/pow_ops.h>
#include <ATen/ops/relu_ops.h>
#include <ATen/ops/rsqrt_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/silu_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/sum_ops.h>
#include <ATen/ops/tanh_backward_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <ATen/ops/tril_ops.h>
#include <ATen/ops/triu_ops.h>
#include <ATen/ops/where_ops.h>
#include <ATen/ops/zero_ops.h>

#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <optional>
#include <string_view>
#include <unordered_map>

#include "diag/log.h"
#include "routes/boxed_args.h"
#include "routes/schema_fit.h"
#include "routes/typed_boxing.h"

namespace flagos::routes {
namespace typed {

void log_first_call(FirstCallLog& log) {
  if (!log.done.exchange(true)) diag::info(log.line);
}

}  // namespace typed

namespace {

// The operators with a typed kernel, as at::_ops structs. Chosen from the
// operator census of GPT-2 training and inference (tools/bench/gpt2.py) and
// the common activations, and the out= matmuls Inductor's compiled code
// calls (extern_kernels.mm and friends); add one here to give it the typed path.
#define FLAGOS_TYPED_BOXING_OPS(X)                                                                            \
  X(add_Tensor) X(add__Tensor) X(add_Scalar) X(sub_Tensor) X(mul_Tensor) X(mul__Tensor) X(mul_Scalar)         \
  X(div_Tensor) X(div__Tensor) X(div_Scalar) X(neg) X(rsqrt) X(sqrt) X(exp) X(tanh) X(tanh_backward)          \
  X(pow_Tensor_Scalar) X(gelu) X(gelu_backward) X(silu) X(relu) X(threshold_backward)                         \
  X(sigmoid) X(where_self) X(masked_fill__Scalar) X(eq_Scalar) X(ne_Scalar) X(fill__Scalar) X(zero_)          \
  X(clone) X(_unsafe_view) X(tril) X(triu) X(cumsum) X(argmax) X(all) X(mm) X(addmm) X(bmm) X(baddbmm)        \
  X(mm_out) X(addmm_out) X(bmm_out) X(baddbmm_out)                                                            \
  X(sum_dim_IntList) X(mean_dim) X(native_layer_norm) X(native_layer_norm_backward) X(_softmax)               \
  X(_softmax_backward_data) X(_log_softmax) X(_log_softmax_backward_data) X(_safe_softmax)                    \
  X(nll_loss_forward) X(nll_loss_backward) X(native_dropout) X(native_dropout_backward) X(embedding)          \
  X(embedding_dense_backward) X(index_select) X(cat) X(constant_pad_nd)                                       \
  X(_scaled_dot_product_efficient_attention) X(_scaled_dot_product_efficient_attention_backward)              \
  X(_scaled_dot_product_flash_attention) X(_scaled_dot_product_flash_attention_backward)                      \
  X(_scaled_dot_product_cudnn_attention) X(_scaled_dot_product_cudnn_attention_backward)                      \
  X(_scaled_dot_product_flash_attention_for_cpu) X(_scaled_dot_product_flash_attention_for_cpu_backward)      \
  X(_foreach_lerp__Scalar) X(_foreach_mul__Scalar) X(_foreach_mul__Tensor) X(_foreach_addcmul__Scalar)        \
  X(_foreach_sqrt) X(_foreach_div__ScalarList) X(_foreach_add__Scalar) X(_foreach_add__List)                  \
  X(_foreach_addcdiv__ScalarList) X(_foreach_addcdiv__Scalar) X(_foreach_norm_Scalar) X(_foreach_sub__Scalar)

using Make = std::optional<torch::CppFunction> (*)(const std::string& log_line);

template <class Op, BoxingTarget Target>
std::optional<torch::CppFunction> make(const std::string& log_line) {
  if (const std::string why = typed_schema_mismatch(Op::schema_str); !why.empty()) {
    diag::warn_once(std::string("typed-schema:") + Op::name + "." + Op::overload_name,
                    std::string("[flagos] the typed boxing kernel of ") + Op::name + " cannot serve this torch (" +
                        why + "): the boxed route serves it");
    return std::nullopt;
  }
  using Kernel = typed::TypedBoxing<Op, Target>;
  if (!log_line.empty()) Kernel::log = new typed::FirstCallLog{log_line};  // kept for the process
  Kernel::traits = new OpTraits(c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name));
  return torch::CppFunction::makeFromUnboxedFunction(TORCH_FN(Kernel::call));
}

// "aten::add" + "Tensor" -> "add.Tensor", the routing name.
template <class Op>
std::string routing_name() {
  std::string name = Op::name + std::string_view("aten::").size();
  if (*Op::overload_name) name += std::string(".") + Op::overload_name;
  return name;
}

const std::unordered_map<std::string, std::pair<Make, Make>>& kernels() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, std::pair<Make, Make>>;
#define FLAGOS_ADD(op)                                                                   \
  t->emplace(routing_name<at::_ops::op>(), std::pair(&make<at::_ops::op, BoxingTarget::Cpu>, \
                                                     &make<at::_ops::op, BoxingTarget::Cuda>));
    FLAGOS_TYPED_BOXING_OPS(FLAGOS_ADD)
#undef FLAGOS_ADD
    return t;
  }();
  return *table;
}

}  // namespace

std::string typed_schema_mismatch(const std::string& compiled) {
  std::optional<c10::FunctionSchema> built;
  try {
    built = torch::jit::parseSchema("aten::" + compiled);
  } catch (const std::exception&) {
    return "its compiled schema does not parse";
  }
  const std::string name = c10::toString(built->operator_name());
  switch (schema_fit(*built)) {
    case SchemaFit::kNoOperator: return "this torch has no " + name;
    case SchemaFit::kDeclaredDifferently: return "this torch declares " + name + " differently";
    case SchemaFit::kSame: break;
  }
  return "";
}

std::optional<torch::CppFunction> typed_boxing_kernel(const std::string& op, BoxingTarget target,
                                                      const std::string& log_line) {
  const auto& table = kernels();
  auto it = table.find(op);
  if (it == table.end()) return std::nullopt;
  return (target == BoxingTarget::Cpu ? it->second.first : it->second.second)(log_line);
}

std::vector<std::string> typed_boxing_ops() {
  std::vector<std::string> names;
  for (const auto& [name, makers] : kernels()) names.push_back(name);
  return names;
}

// Op's typed kernel for `target`, called directly (not through the dispatcher).
template <class Op, class... Args>
decltype(auto) call_typed(BoxingTarget target, Args&&... args) {
  if (target == BoxingTarget::Cpu) return typed::TypedBoxing<Op, BoxingTarget::Cpu>::call(args...);
  return typed::TypedBoxing<Op, BoxingTarget::Cuda>::call(args...);
}

at::Tensor typed_to_copy(BoxingTarget target, const at::Tensor& self, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory, bool non_blocking,
                         std::optional<at::MemoryFormat> memory_format) {
  return call_typed<at::_ops::_to_copy>(target, self, dtype, layout, device, pin_memory, non_blocking,
                                        memory_format);
}

void typed_copy(BoxingTarget target, const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor self = dst;  // copy_'s Tensor& self: the same TensorImpl
  call_typed<at::_ops::copy_>(target, self, src, false);
}

}  // namespace flagos::routes
