#include "routes/boxing.h"

#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/SmallVector.h>

#include <optional>

#include "aten/transfer.h"
#include "device/device_allocator.h"
#include "device/generator.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "routes/boxed_args.h"
#include "routes/host_allocation.h"

namespace flagos::routes {
namespace {

struct Alias {
  at::Tensor flagos;
  at::Tensor boxed;
  c10::StorageImpl* storage;  // the alias storage as created
};
using Aliases = c10::SmallVector<Alias, 4>;

struct Target {
  BoxingTarget kind;
  c10::DeviceType type;
  c10::DispatchKeySet keys;
  c10::DeviceIndex index;  // the target device's index (CUDA ordinal)
};

Target target_for(BoxingTarget kind, c10::DeviceIndex device) {
  if (kind == BoxingTarget::Cpu)
    return {kind, c10::kCPU, c10::DispatchKeySet(c10::DispatchKey::CPU), -1};
  const int32_t cuda = device::properties(device).interop_device_index;
  return {kind, c10::kCUDA, c10::DispatchKeySet(c10::DispatchKey::CUDA), static_cast<c10::DeviceIndex>(cuda)};
}

c10::Device target_device(const Target& t) {
  return t.kind == BoxingTarget::Cpu ? c10::Device(c10::kCPU) : c10::Device(c10::kCUDA, t.index);
}

at::Tensor alias_of(const at::Tensor& t, const Target& target) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  // Non-owning: the flagos tensor, alive on the caller's stack, owns the bytes.
  c10::DataPtr view(impl->mutable_data(), target_device(target));
  c10::Allocator* grow = target.kind == BoxingTarget::Cpu ? flagos_as_cpu_allocator()
                                                          : c10::GetAllocator(c10::kCUDA);
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), impl->nbytes(),
                                                       std::move(view), grow, impl->resizable());
  auto alias = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(std::move(storage)), target.keys, t.dtype());
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  if (t.is_conj()) alias._set_conj(true);
  if (t.is_neg()) alias._set_neg(true);
  return alias;
}

at::Tensor flagos_over(c10::Storage storage, const at::Tensor& like) {
  auto out = at::detail::make_tensor<c10::TensorImpl>(std::move(storage),
                                                      c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                      like.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  if (like.is_conj()) out._set_conj(true);
  if (like.is_neg()) out._set_neg(true);
  return out;
}

// Re-labels a tensor nothing else references as a flagos tensor, in place:
// one TensorImpl fewer to make and free per result, which is a measurable
// share of a small op's cost. TensorImpl has no setter for its device (it is
// fixed at construction, from the storage), hence the pointer to the
// protected member, taken through a derived class as the language allows;
// _change_backend_component_keys swaps the dispatch keys, autocast's included.
struct TensorImplDevice : c10::TensorImpl {
  static constexpr std::optional<c10::Device> c10::TensorImpl::*member = &TensorImplDevice::device_opt_;
};

at::Tensor relabel(const at::Tensor& t, c10::DeviceIndex device) {
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (t.use_count() != 1 || t.weak_use_count() != 1) return flagos_over(t.storage(), t);
  const c10::Device flagos(c10::DeviceType::PrivateUse1, device);
  impl->*TensorImplDevice::member = flagos;
  impl->_change_backend_component_keys(flagos);
  return t;
}

// A result of the kernel becomes a flagos tensor.
at::Tensor unbox(const at::Tensor& t, c10::DeviceIndex device, const Target& target, const Aliases& aliases) {
  if (!t.defined() || t.device().type() == c10::DeviceType::PrivateUse1) return t;
  // A CUDA kernel's host result (the attention kernels' philox seed and
  // offset) stays on the host, as on native CUDA: copying it over costs a
  // transfer per call, and the backward kernel wants it on the host anyway.
  if (target.kind == BoxingTarget::Cuda && t.device().is_cpu()) return t;
  // A view of an operand has an alias's storage, which does not own its
  // bytes (alias_of: a deleter that deletes nothing): only such a result is
  // searched for, so that a foreach op's hundreds of fresh results do not
  // each scan hundreds of aliases.
  if (t.storage().data_ptr().get_deleter() == &c10::detail::deleteNothing) {
    for (const Alias& a : aliases)
      if (t.storage().unsafeGetStorageImpl() == a.storage) return flagos_over(a.flagos.storage(), t);
  }
  const bool ours = target.kind == BoxingTarget::Cpu ? is_flagos_allocation(t.storage().data_ptr())
                                                     : t.device().type() == c10::kCUDA;
  if (ours) {
    c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
    impl->mutable_data_ptr().unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, device));
    impl->set_allocator(device::allocator());
    return relabel(t, device);
  }
  // Ordinary host memory (a cached constant, a scalar): copy it over.
  at::Tensor host = t.device().is_cpu() ? t : t.cpu();
  at::Tensor out = at::empty_strided(host.sizes(), host.strides(),
                                     host.options().device(c10::Device(c10::DeviceType::PrivateUse1, device)));
  aten::write_into(out, host);
  return out;
}

// An out=/in-place operand whose alias the kernel resized or re-pointed.
void sync_back(const Alias& a, c10::DeviceIndex device) {
  c10::TensorImpl* flagos = a.flagos.unsafeGetTensorImpl();
  c10::StorageImpl* now = a.boxed.storage().unsafeGetStorageImpl();
  c10::StorageImpl* mine = a.flagos.storage().unsafeGetStorageImpl();
  if (now == a.storage && now->data() != mine->data()) {
    c10::DataPtr grown = std::move(now->mutable_data_ptr());  // adopt the grown block
    grown.unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, device));
    mine->set_data_ptr_noswap(std::move(grown));
    mine->set_nbytes(now->nbytes());
  } else if (now != a.storage) {
    if (a.flagos.sizes() != a.boxed.sizes()) a.flagos.resize_(a.boxed.sizes());
    aten::write_into(a.flagos, a.boxed.device().is_cpu() ? a.boxed : a.boxed.cpu());
    return;
  }
  if (flagos->sizes() != a.boxed.sizes() || flagos->strides() != a.boxed.strides() ||
      flagos->storage_offset() != a.boxed.storage_offset())
    flagos->set_sizes_and_strides(a.boxed.sizes(), a.boxed.strides(), a.boxed.storage_offset());
}

void wait_for_stream(c10::DeviceIndex device) {
  const auto& plugin = device::active_plugin();
  flagos_stream_t stream = device::current_native(device);
  flagos_status_t status = plugin.api().stream_query(stream);
  if (status == FLAGOS_NOT_READY) status = plugin.api().stream_synchronize(stream);
  plugin.check(status, "stream_synchronize");
}

// Makes the flagos current stream torch's current CUDA stream for the call.
// An external CUDA stream's c10 id is its cudaStream_t (c10/cuda/CUDAStream).
class CudaStreamScope {
 public:
  explicit CudaStreamScope(c10::DeviceIndex device)
      : impl_(c10::impl::getDeviceGuardImpl(c10::kCUDA)),
        previous_(impl_->exchangeStream(device::current_cuda_stream(device))) {}
  ~CudaStreamScope() { impl_->exchangeStream(*previous_); }

 private:
  const c10::impl::DeviceGuardImplInterface* impl_ = nullptr;
  std::optional<c10::Stream> previous_;
};

}  // namespace

void run_boxed(BoxingTarget kind, const BoxingPlan& plan,
               torch::jit::Stack* stack, c10::function_ref<void(torch::jit::Stack*)> invoke) {
  const size_t num_args = plan.generator_arg.size();
  c10::IValue* args = &*(stack->end() - num_args);
  const auto found = find_device(args, num_args);
  const c10::DeviceIndex device = found ? *found : static_cast<c10::DeviceIndex>(device::current_device());
  const Target target = target_for(kind, device);

  // Returns that are written arguments come back as the caller's own flagos
  // tensors: only those arguments are kept (each copy is a refcount).
  c10::SmallVector<c10::IValue, 8> originals(plan.keeps_originals ? num_args : 0);
  for (int16_t i : plan.return_of)
    if (i >= 0) originals[i] = args[i];
  Aliases aliases;
  // Per written argument (in plan.written's order), its aliases' range: the
  // sync back needs no search (a foreach op writes hundreds of tensors).
  c10::SmallVector<std::pair<size_t, size_t>, 4> written_aliases;
  auto next_written = plan.written.begin();
  auto box = [&](const at::Tensor& t) {
    if (!is_flagos(t)) return t;
    at::Tensor alias = alias_of(t, target);
    aliases.push_back({t, alias, alias.storage().unsafeGetStorageImpl()});
    return alias;
  };
  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& v = args[i];
    const bool written = next_written != plan.written.end() && *next_written == static_cast<int16_t>(i);
    if (written) {
      ++next_written;
      written_aliases.emplace_back(aliases.size(), aliases.size());
    }
    if (v.isTensor()) {
      v = box(v.toTensor());
    } else if (v.isList()) {
      v = map_tensors(v, box);
    } else if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1) {
      v = target_device(target);
    } else if (plan.generator_arg[i] && (v.isNone() || v.isGenerator())) {
      v = device::engine_for(v.isNone() ? at::Generator() : v.toGenerator(), device);
    }
    if (written) written_aliases.back().second = aliases.size();
  }

  if (kind == BoxingTarget::Cpu) {
    // The kernel runs now, on the host: queued device work must finish first.
    wait_for_stream(device);
    for (const Alias& a : aliases)
      if (a.flagos.device().index() != device) wait_for_stream(a.flagos.device().index());
    HostAllocationScope scope(device);
    device::SeededCpuScope seeded(device, plan.draws_default_generator);
    invoke(stack);
  } else {
    CudaStreamScope scope(device);
    invoke(stack);
  }

  for (const auto& [begin, end] : written_aliases)
    for (size_t a = begin; a < end; ++a) sync_back(aliases[a], device);

  const size_t num_returns = plan.return_of.size();
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& out = (*stack)[stack->size() - num_returns + r];
    if (plan.return_of[r] >= 0) {
      out = originals[plan.return_of[r]];
      continue;
    }
    out = map_tensors(out, [&](const at::Tensor& t) { return unbox(t, device, target, aliases); });
  }
}

at::Tensor boxed_view(const at::Tensor& t, BoxingTarget kind) {
  return alias_of(t, target_for(kind, t.device().index()));
}

std::optional<BoxingTarget> stock_target(c10::DeviceIndex device) {
  if (device::has_capability(device, FLAGOS_CAP_CUDA_ABI))
    return c10::impl::hasDeviceGuardImpl(c10::kCUDA) ? std::optional(BoxingTarget::Cuda) : std::nullopt;
  if (device::has_capability(device, FLAGOS_CAP_HOST_ADDRESSABLE)) return BoxingTarget::Cpu;
  return std::nullopt;
}

void boxed_copy(BoxingTarget target, const at::Tensor& dst, const at::Tensor& src) {
  static const c10::OperatorHandle copy = c10::Dispatcher::singleton().findSchemaOrThrow("aten::copy_", "");
  static const BoxingPlan plan(copy);
  torch::jit::Stack stack{dst, src, false};
  (target == BoxingTarget::Cpu ? cpu_boxing : cuda_boxing)(copy, plan, &stack);
}

void cpu_boxing(const c10::OperatorHandle& op, const BoxingPlan& plan, torch::jit::Stack* stack) {
  run_boxed(BoxingTarget::Cpu, plan, stack, [&](torch::jit::Stack* s) {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), s);
  });
}

void cuda_boxing(const c10::OperatorHandle& op, const BoxingPlan& plan, torch::jit::Stack* stack) {
  run_boxed(BoxingTarget::Cuda, plan, stack, [&](torch::jit::Stack* s) {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CUDA), s);
  });
}

}  // namespace flagos::routes
