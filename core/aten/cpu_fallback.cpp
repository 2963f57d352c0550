#include "aten/cpu_fallback.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "aten/host_dtype_gaps.h"
#include "aten/host_mirror.h"
#include "aten/nested_fallback.h"
#include "aten/transfer.h"
#include "device/generator.h"
#include "device/graph.h"
#include "device/runtime.h"
#include "diag/channels.h"
#include "diag/log.h"
#include "routes/boxed_args.h"
#include "routes/boxing_call.h"

namespace flagos::aten {
namespace {

using routes::written_argument;
using routes::find_device;
using routes::for_each_tensor;
using routes::is_generator_arg;
using routes::map_tensors;


// A ZeroTensor (what _efficientzerotensor returns) has no bytes: its flagos
// counterpart is built like CUDA's, over an allocator that hands out null.
at::Tensor zero_tensor(const at::Tensor& host, c10::Device where) {
  static std::mutex mutex;
  static std::map<c10::DeviceIndex, std::unique_ptr<at::native::ZeroTensorAllocator>> allocators;
  std::lock_guard<std::mutex> lock(mutex);
  auto& allocator = allocators[where.index()];
  if (!allocator) allocator = std::make_unique<at::native::ZeroTensorAllocator>(where);
  const c10::DispatchKeySet keys =
      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1) | c10::DispatchKeySet(c10::DispatchKey::ZeroTensor);
  return at::detail::empty_generic(host.sizes(), allocator.get(), keys, host.scalar_type(), std::nullopt);
}

at::Tensor to_device(const at::Tensor& host, c10::DeviceIndex device) {
  if (!host.defined()) return host;
  const c10::Device where(c10::DeviceType::PrivateUse1, device);
  if (host._is_zerotensor()) return zero_tensor(host, where);
  if (host.is_nested()) return nested_to_device(host, where);
  if (host.is_conj() || host.is_neg()) return to_device(host.resolve_conj().resolve_neg(), device);
  at::Tensor out = host.is_non_overlapping_and_dense()
                       ? at::empty_strided(host.sizes(), host.strides(), host.options().device(where))
                       : at::empty(host.sizes(), host.options().device(where));
  write_into(out, host);
  return out;
}

// Foreach ops work per list element, so the k-th tensor of a returned list
// belongs with the k-th tensor of the first list operand, on its device (as
// CUDA places it). Empty when no operand is a list of flagos tensors.
std::vector<c10::DeviceIndex> list_devices(const std::vector<c10::IValue>& args) {
  for (const auto& v : args) {
    if (!v.isTensorList()) continue;
    std::vector<c10::DeviceIndex> out;
    for (const at::Tensor& t : v.toTensorList().vec()) {
      if (!is_flagos(t)) return {};
      out.push_back(t.device().index());
    }
    return out;
  }
  return {};
}

}  // namespace

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t num_args = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - num_args, stack->end());
  torch::jit::drop(*stack, num_args);

  const std::optional<c10::DeviceIndex> found = find_device(args.data(), args.size());
  const c10::DeviceIndex device =
      found ? *found : static_cast<c10::DeviceIndex>(device::current_device());
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, device));
  if (diag::channel_enabled("fallback")) diag::info("cpu_fallback: " + c10::toString(schema.operator_name()));
  device::refuse_host_route_in_capture(device, c10::toString(schema.operator_name()), "cpu_fallback");

  HostMirrors mirrors;
  std::optional<c10::DeviceIndex> other;
  at::Tensor foreign;
  for (const auto& v : args)
    for_each_tensor(v, [&](const at::Tensor& t) {
      if (!is_flagos(t)) return routes::note_foreign_operand(foreign, t);
      mirrors.note(t);
      if (t.device().index() != device) other = t.device().index();
    });
  const std::vector<c10::DeviceIndex> per_element = other ? list_devices(args) : std::vector<c10::DeviceIndex>{};
  if (other || foreign.defined()) {
    const routes::OpTraits traits(op);
    // New results can be placed only where each one's device is known.
    if (other) traits.check_devices(device, *other, /*host_kernel=*/per_element.empty());
    if (foreign.defined()) routes::check_foreign_operand(traits.foreign_operands, traits.name, device, foreign);
  }
  mirrors.download();

  std::vector<c10::IValue> host_args(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& v = args[i];
    if (is_generator_arg(schema.arguments()[i]) && (v.isNone() || v.isGenerator())) {
      host_args[i] = device::engine_for(v.isNone() ? at::Generator() : v.toGenerator(), device);
    } else if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1) {
      host_args[i] = c10::Device(c10::kCPU);
    } else {
      host_args[i] = map_tensors(v, [&](const at::Tensor& t) {
        return is_flagos(t) ? mirrors.host_view(t) : t;
      });
    }
    stack->push_back(host_args[i]);
  }

  {
    device::SeededCpuScope seeded(device, routes::draws_from_default_generator(op));
    run_cpu_kernel(op, stack);
  }

  // Mutated operands: pair each flagos tensor with its (maybe resized) host view.
  routes::for_each_written(op, args, host_args, [&](const at::Tensor& device_side, const at::Tensor& host_side) {
    if (is_flagos(device_side)) mirrors.mark_written(device_side, host_side);
  });
  mirrors.upload();

  const size_t num_returns = schema.returns().size();
  const uint32_t host_returns = foreign.defined() ? routes::host_returns(op) : 0;  // made from host operands
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& out = (*stack)[stack->size() - num_returns + r];
    const int written_arg = written_argument(schema, r);
    if (written_arg >= 0) {
      out = args[written_arg];  // in-place / out=: the caller's own flagos tensor(s)
      continue;
    }
    if (routes::stays_on_host(host_returns, r)) continue;
    size_t element = 0;  // position in a returned list, for per_element
    const bool placed = out.isTensorList() && out.toTensorList().size() == per_element.size();
    out = map_tensors(out, [&](const at::Tensor& host) {
      const c10::DeviceIndex home = placed ? per_element[element++] : device;
      if (!host.defined() || is_flagos(host)) return host;
      routes::require_strided_result(c10::toString(schema.operator_name()), host);
      // A result sharing an operand's bytes on the CPU shares them on flagos,
      // annotated view or not (_unsafe_view, unsafe_split write through it).
      at::Tensor view = mirrors.device_view_of(host);
      return view.defined() ? view : to_device(host, home);
    });
  }
}

namespace {

// Convolution reaches no fallback on its own: its CompositeExplicitAutograd
// kernel picks an implementation by device type and, for PrivateUse1, calls
// the *_overrideable hooks, whose default kernels (CPU included) throw. The
// hooks therefore run the stock convolution ops through the fallback.
c10::OperatorHandle aten_op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

// convolution_overrideable has exactly aten::convolution's arguments.
void convolution_on_host(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  static const c10::OperatorHandle convolution = aten_op("aten::convolution", "");
  cpu_fallback(convolution, stack);
}

// convolution_backward_overrideable lacks convolution_backward's bias_sizes
// (4th argument); the bias has one element per output channel.
void convolution_backward_on_host(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  static const c10::OperatorHandle backward = aten_op("aten::convolution_backward", "");
  constexpr size_t kOverrideableArgs = 10;
  const auto first = stack->end() - kOverrideableArgs;
  const bool bias_grad = stack->back().toBoolList().get(2);
  c10::IValue bias_sizes;
  if (bias_grad) bias_sizes = std::vector<int64_t>{first->toTensor().size(1)};
  stack->insert(first + 3, std::move(bias_sizes));
  cpu_fallback(backward, stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // CompositeExplicitAutograd kernels that reject a PrivateUse1 tensor by
  // device type; the fallback must win over them.
  for (const char* name : {"mode.values"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
  m.impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&convolution_on_host>());
  m.impl("convolution_backward_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&convolution_backward_on_host>());
}

}  // namespace flagos::aten
