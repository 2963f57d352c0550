// Walking the boxed arguments of an operator call: the tensors inside an
// IValue (tensor, tensor list, list of optional tensors), the device an op
// runs on, generator arguments, and which argument a return aliases.
// Shared by the routes that rewrite a call for another dispatch key.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

#include "aten/transfer.h"

namespace flagos::routes {

using aten::is_flagos;

// `v` with `f` applied to every tensor inside; other values unchanged.
template <typename F>
c10::IValue map_tensors(const c10::IValue& v, F&& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    out.reserve(v.toTensorList().size());
    for (const at::Tensor& t : v.toTensorList()) out.push_back(f(t));
    return out;
  }
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    for (const c10::IValue& item : list) out.push_back(map_tensors(item, f));
    return out;
  }
  return v;
}

template <typename F>
void for_each_tensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) f(t);
  } else if (v.isList()) {
    for (const c10::IValue& item : v.toList()) for_each_tensor(item, f);
  }
}

// The flagos device of the first flagos tensor (or flagos Device argument).
std::optional<c10::DeviceIndex> find_device(const c10::IValue* args, size_t n);

bool is_generator_arg(const c10::Argument& arg);

// A random operator whose kernel draws from the default generator: tagged
// nondeterministic_seeded and without a Generator argument (native_dropout).
bool draws_from_default_generator(const c10::OperatorHandle& op);

// The index of a seeded op's `dropout_p` argument (fused attention), or -1:
// those ops draw only when it is nonzero.
int dropout_argument(const c10::OperatorHandle& op);

// The argument return `ret` is, when the op writes it (in-place, out=): its
// index; -1 for a return that is not a written argument.
int written_argument(const c10::FunctionSchema& schema, size_t ret);

// Throws flagos::Error for a kernel result flagos cannot hold: flagos
// tensors are plain strided ones (a sparse or mkldnn layout has no storage to
// place on a device; a quantized one has a quantizer no flagos kernel reads). `op` names the operator in the message.
void require_strided_result(const std::string& op, const at::Tensor& result);

// Per argument of `op`: whether its kernel may write it. The schema's write
// annotations, plus what kernels write without one: torch's SchemaInfo list
// (native_batch_norm's running statistics) and batch_norm_update_stats. A
// route that runs a kernel on copies must copy these back too. Cached per
// operator; thread-safe.
const std::vector<bool>& written_arguments(const c10::OperatorHandle& op);

// After a kernel ran on copies: f(device tensor, its copy) for each tensor of
// each argument the kernel may have written (args and copies side by side).
template <typename F>
void for_each_written(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args,
                      const std::vector<c10::IValue>& copies, F&& f) {
  const std::vector<bool>& writes = written_arguments(op);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!writes[i]) continue;
    std::vector<at::Tensor> device_side, host_side;
    for_each_tensor(args[i], [&](const at::Tensor& t) { device_side.push_back(t); });
    for_each_tensor(copies[i], [&](const at::Tensor& t) { host_side.push_back(t); });
    for (size_t k = 0; k < device_side.size() && k < host_side.size(); ++k) f(device_side[k], host_side[k]);
  }
}

}  // namespace flagos::routes
