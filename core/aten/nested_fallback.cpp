// Strided nested tensors (torch.nested.nested_tensor, and what
// nn.TransformerEncoder's inference fast path builds from a padding mask) on
// flagos: an operator that reaches NestedTensorPrivateUse1 runs torch's CPU
// kernel on host copies and its results come back to the device.
//
// A nested tensor is one storage plus size/stride/offset metadata that live on
// the CPU, so the copy is the whole storage of each nested operand; a result
// that is a view of an operand's storage (unbind, transpose) is rebuilt as the
// same view of that operand's device storage, and an operand the kernel wrote
// has its storage written back. Dense flagos operands go to the CPU and back
// as in cpu_fallback. Sparse and compressed-sparse flagos tensors, which the
// device never holds, are refused in one [flagos] line naming the operator.
#include "aten/nested_fallback.h"

#include <ATen/ATen.h>
#include <ATen/NestedTensorImpl.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <string_view>
#include <vector>

#include "aten/transfer.h"
#include "device/generator.h"
#include "device/graph.h"
#include "device/runtime.h"
#include "diag/channels.h"
#include "diag/log.h"
#include "routes/boxed_args.h"
#include "runtime/error.h"

namespace flagos::aten {
namespace {

using routes::map_tensors;

// One nested operand: its device storage as a 1-D tensor, and the host copy.
struct NestedOperand {
  at::Tensor device_storage;
  at::Tensor host_storage;
};

at::Tensor wrap(const at::Tensor& storage, const at::native::NestedTensorImpl& like) {
  return at::detail::make_tensor<at::native::NestedTensorImpl>(
      storage, like.get_nested_sizes(), like.get_nested_strides(), like.get_storage_offsets());
}

// Operators whose results are CPU tensors on every device (a nested tensor's
// metadata), and a call that asks for a CPU result: their results stay host.
bool results_stay_on_host(std::string_view name, const std::vector<c10::IValue>& args) {
  if (name == "aten::_nested_tensor_size" || name == "aten::_nested_tensor_strides" ||
      name == "aten::_nested_tensor_storage_offsets")
    return true;
  for (const c10::IValue& v : args)
    if (v.isDevice() && v.toDevice().type() == c10::kCPU) return true;
  return false;
}

class NestedCall {
 public:
  NestedCall(c10::DeviceIndex device, std::string name) : device_(device), name_(std::move(name)) {}

  at::Tensor to_host(const at::Tensor& t) {
    if (!is_flagos(t)) return t;
    if (!t.is_nested()) return t.to(at::kCPU);
    const auto* impl = at::native::get_nested_tensor_impl(t);
    NestedOperand op{impl->get_unsafe_storage_as_tensor(), {}};
    op.host_storage = op.device_storage.to(at::kCPU);
    operands_.push_back(op);
    return wrap(op.host_storage, *impl);
  }

  // A host result back on the device: a view of an operand's device storage
  // when it shares that operand's host storage, else a copy.
  at::Tensor to_device(const at::Tensor& host) {
    if (!host.defined() || is_flagos(host)) return host;
    const c10::Device where(c10::DeviceType::PrivateUse1, device_);
    const NestedOperand* source = operand_sharing(host);
    if (host.is_nested()) {
      const auto* impl = at::native::get_nested_tensor_impl(host);
      return source ? wrap(source->device_storage, *impl) : nested_to_device(host, where);
    }
    if (source) return source->device_storage.as_strided(host.sizes(), host.strides(), host.storage_offset());
    routes::require_strided_result(name_, host);
    return host.to(where);
  }

  // After the kernel: the storage of each nested operand it may have written.
  void write_back(const at::Tensor& device, const at::Tensor& host) {
    if (!is_flagos(device)) return;
    if (!device.is_nested()) {
      device.copy_(host);
      return;
    }
    if (const NestedOperand* op = operand_sharing(host)) op->device_storage.copy_(op->host_storage);
  }

 private:
  const NestedOperand* operand_sharing(const at::Tensor& host) const {
    const auto* storage = host.is_nested()
                              ? at::native::get_nested_tensor_impl(host)->get_unsafe_storage_as_tensor()
                                    .storage().unsafeGetStorageImpl()
                              : (host.has_storage() ? host.storage().unsafeGetStorageImpl() : nullptr);
    for (const NestedOperand& op : operands_)
      if (op.host_storage.storage().unsafeGetStorageImpl() == storage) return &op;
    return nullptr;
  }

  c10::DeviceIndex device_;
  std::string name_;
  std::vector<NestedOperand> operands_;
};

void nested_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t num_args = schema.arguments().size();
  std::vector<c10::IValue> args(stack->end() - num_args, stack->end());
  torch::jit::drop(*stack, num_args);
  const std::optional<c10::DeviceIndex> found = routes::find_device(args.data(), args.size());
  const c10::DeviceIndex device = found ? *found : static_cast<c10::DeviceIndex>(device::current_device());
  c10::DeviceGuard guard(c10::Device(c10::DeviceType::PrivateUse1, device));
  const std::string name = c10::toString(schema.operator_name());
  if (diag::channel_enabled("fallback")) diag::info("nested cpu_fallback: " + name);
  device::refuse_host_route_in_capture(device, name, "cpu_fallback");

  NestedCall call(device, name);
  const bool host_results = results_stay_on_host(name, args);
  std::vector<c10::IValue> host_args(num_args);
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& v = args[i];
    if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1) {
      host_args[i] = c10::Device(c10::kCPU);
    } else {
      host_args[i] = map_tensors(v, [&](const at::Tensor& t) { return call.to_host(t); });
    }
    stack->push_back(host_args[i]);
  }
  {
    device::SeededCpuScope seeded(device, routes::draws_from_default_generator(op));
    op.callBoxed(stack);
  }
  routes::for_each_written(op, args, host_args, [&](const at::Tensor& device_side, const at::Tensor& host_side) {
    call.write_back(device_side, host_side);
  });
  const size_t num_returns = schema.returns().size();
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& out = (*stack)[stack->size() - num_returns + r];
    const int written_arg = routes::written_argument(schema, r);
    if (written_arg >= 0) out = args[written_arg];
    else if (!host_results) out = map_tensors(out, [&](const at::Tensor& host) { return call.to_device(host); });
  }
}

// Every aten operator with a NestedTensorCPU kernel takes the fallback as its
// NestedTensorPrivateUse1 kernel: a backend fallback ranks below a
// CompositeImplicitAutograd kernel, which (linear) would decompose a nested
// tensor into dense calls it cannot make where the CPU has a nested kernel.
// Operators registered after torch_fl's core loads are not covered.
struct NestedKernels {
  NestedKernels() {
    static torch::Library lib(torch::Library::IMPL, "aten", c10::DispatchKey::NestedTensorPrivateUse1, __FILE__,
                              __LINE__);
    auto& dispatcher = c10::Dispatcher::singleton();
    for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      const auto handle = dispatcher.findOp(name);
      if (!handle || !handle->hasKernelForDispatchKey(c10::DispatchKey::NestedTensorCPU)) continue;
      const std::string full = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
      lib.impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&nested_fallback>());
    }
  }
};
const NestedKernels nested_kernels;

// The device holds no sparse tensor; an operator meeting one says so.
template <const char* Layout>
void refuse_layout(const c10::OperatorHandle& op, torch::jit::Stack*) {
  throw Error(c10::toString(op.schema().operator_name()) + ": flagos tensors are plain strided ones, not " + Layout +
              " (docs/platforms/README.md, \"Layouts\"); keep " + Layout + " tensors on the CPU");
}

constexpr char kSparse[] = "sparse COO";
constexpr char kCompressed[] = "compressed sparse";

}  // namespace

namespace {

// How torch.load rebuilds a nested tensor: a view of the buffer's own
// storage, device-independent as torch's CPU kernel is (run through a route,
// its nested result would be copied and lose its storage).
at::Tensor nested_view_from_buffer(const at::Tensor& buffer, const at::Tensor& nested_sizes,
                                   const at::Tensor& nested_strides, const at::Tensor& storage_offsets) {
  if (buffer.dim() != 1 || !buffer.is_contiguous())
    throw Error("aten::_nested_view_from_buffer: the buffer must be a contiguous 1-D tensor");
  return at::detail::make_tensor<at::native::NestedTensorImpl>(c10::TensorImpl::VIEW, buffer, nested_sizes,
                                                               nested_strides, storage_offsets);
}

}  // namespace

at::Tensor nested_to_device(const at::Tensor& host, c10::Device where) {
  const auto* impl = at::native::get_nested_tensor_impl(host);
  return wrap(impl->get_unsafe_storage_as_tensor().to(where), *impl);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_nested_view_from_buffer", &nested_view_from_buffer);
}

TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&nested_fallback>());
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&refuse_layout<kSparse>>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&refuse_layout<kCompressed>>());
}

}  // namespace flagos::aten
