#include "routes/boxing_call.h"

#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>

#include "aten/transfer.h"
#include "device/device_allocator.h"
#include "device/generator.h"
#include "device/graph.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "error.h"
#include "routes/boxed_args.h"
#include "routes/host_allocation.h"

namespace flagos::routes {
namespace {

c10::Device cuda_device_of(c10::DeviceIndex flagos) {
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device::properties(flagos).interop_device_index));
}

// The flagos device over CUDA device `cuda` (a kernel's result there);
// `fallback` when none is.
c10::DeviceIndex flagos_of_cuda(c10::DeviceIndex cuda, c10::DeviceIndex fallback) {
  for (int32_t d = 0; d < device::device_count(); ++d)
    if (device::properties(d).interop_device_index == cuda) return static_cast<c10::DeviceIndex>(d);
  return fallback;
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
// one TensorImpl fewer to make and free per result, a measurable share of a
// small op's cost. Its storage's DataPtr already says flagos, and
// set_storage_keep_dtype takes the tensor's device from the storage (TensorImpl
// has no other public way to change it); _change_backend_component_keys swaps
// the dispatch keys, autocast's included. A shared tensor, or one whose
// metadata may not change, gets a flagos tensor of its own.
at::Tensor relabel(const at::Tensor& t, c10::DeviceIndex device) {
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (t.use_count() != 1 || t.weak_use_count() != 1 || !impl->allow_tensor_metadata_change())
    return flagos_over(t.storage(), t);
  const c10::Device flagos(c10::DeviceType::PrivateUse1, device);
  TORCH_INTERNAL_ASSERT_DEBUG_ONLY(t.storage().device() == flagos, "[flagos] relabel: the storage is not flagos memory yet");
  impl->set_storage_keep_dtype(t.storage());
  impl->_change_backend_component_keys(flagos);
  return t;
}

// Per thread and target, aliases of finished calls (~BoxingCall).
BoxingCall::SpareAliases& spare_aliases(BoxingTarget target) {
  thread_local BoxingCall::SpareAliases spare[2];
  return spare[target == BoxingTarget::Cpu ? 0 : 1];
}

// Makes each device's flagos current stream torch's current CUDA stream
// there for the call (device/streams.h: usually it already is): the op's
// device, and any other device whose tensors an op spanning devices works on
// (else that work would go to CUDA's legacy default stream, unordered with
// the flagos streams). Restores a CUDA stream the thread chose itself.
class CudaStreamScope {
 public:
  CudaStreamScope(c10::DeviceIndex device, c10::ArrayRef<c10::DeviceIndex> others) {
    enter(device);
    for (c10::DeviceIndex d : others) enter(d);
  }
  ~CudaStreamScope() {
    if (previous_.empty()) [[likely]] return;
    const auto* cuda = c10::impl::getDeviceGuardImpl(c10::kCUDA);
    for (auto it = previous_.rbegin(); it != previous_.rend(); ++it) cuda->exchangeStream(*it);
  }

 private:
  void enter(c10::DeviceIndex device) {
    if (std::optional<c10::Stream> previous = device::enter_cuda_stream(device)) previous_.push_back(*previous);
  }
  c10::SmallVector<c10::Stream, 1> previous_;
};

std::string_view unqualified(std::string_view name) {  // "aten::add" -> "add"
  const size_t colons = name.find("::");
  return colons == std::string_view::npos ? name : name.substr(colons + 2);
}

bool spans_devices(std::string_view name) {
  for (std::string_view prefix : {"_foreach_", "_fused_", "_amp_foreach_"})
    if (name.substr(0, prefix.size()) == prefix) return true;
  return name == "copy_" || name == "_copy_from" || name == "_copy_from_and_resize" || name == "_to_copy";
}

}  // namespace

void wait_for_stream(c10::DeviceIndex device) {
  const auto& plugin = device::active_plugin();
  flagos_stream_t stream = device::current_native(device);
  flagos_status_t status = plugin.api().stream_query(stream);
  if (status == FLAGOS_NOT_READY) status = plugin.api().stream_synchronize(stream);
  plugin.check(status, "stream_synchronize");
}

OpTraits::OpTraits(const c10::OperatorHandle& op)
    : name(c10::toString(op.schema().operator_name())),
      draws_default_generator(draws_from_default_generator(op)),
      dropout_arg(dropout_argument(op)),
      spans_devices(::flagos::routes::spans_devices(unqualified(op.schema().name()))),
      foreign_operands(foreign_operand_rule(op)),
      host_returns(::flagos::routes::host_returns(op)) {
  const c10::FunctionSchema& schema = op.schema();
  for (size_t r = 0; r < schema.returns().size(); ++r) returns_new_tensors |= written_argument(schema, r) < 0;
}

void OpTraits::check_devices(c10::DeviceIndex first, c10::DeviceIndex other, bool host_kernel) const {
  const std::string devices = "flagos:" + std::to_string(first) + " and flagos:" + std::to_string(other);
  if (!spans_devices)
    throw Error(name + ": Expected all tensors to be on the same device, but found at least two devices, " +
                devices + "!");
  if (host_kernel && returns_new_tensors)
    throw Error(name + ": a call over tensors of " + devices + " returns new tensors, which a kernel run on "
                "the host cannot place on their devices: call it once per device (in-place forms are fine)");
}

BoxingCall::BoxingCall(BoxingTarget target, c10::DeviceIndex device, bool recycle_aliases)
    : target_(target),
      device_(device),
      target_device_(target == BoxingTarget::Cpu ? c10::Device(c10::kCPU) : cuda_device_of(device)),
      target_keys_(dispatch_key(target)),
      spare_(recycle_aliases ? &spare_aliases(target) : nullptr) {}

BoxingCall::~BoxingCall() {
  if (!spare_) return;
  // An alias only this call still references, whose storage nothing else
  // shares and still borrows (a kernel may have grown it into memory of its
  // own), is kept for the thread's next call: three allocations and frees
  // fewer per operand.
  if (spare_->capacity() == 0) spare_->reserve(kSpareAliases);
  // Kept last operand first, so that the next call's first operand takes
  // this call's first alias: a chain of ops on tensors of one shape finds
  // the alias already shaped.
  for (auto it = aliases_.rbegin(); it != aliases_.rend(); ++it) {
    Alias& a = *it;
    if (spare_->size() == kSpareAliases) break;
    const c10::Storage& storage = a.boxed.unsafeGetTensorImpl()->unsafe_storage();
    if (a.boxed.use_count() == 1 && a.boxed.weak_use_count() == 1 && storage.use_count() == 1 &&
        storage.unsafeGetStorageImpl() == a.storage &&
        storage.data_ptr().get_deleter() == &c10::detail::deleteNothing)
      spare_->push_back(std::move(a.boxed));
  }
}

at::Tensor BoxingCall::box(const at::Tensor& t, bool written, bool in_list) {
  if (!aten::is_flagos(t)) {
    note_foreign_operand(foreign_, t);
    return t;
  }
  c10::Device device = target_device_;
  const c10::DeviceIndex own = t.device().index();
  if (own != device_) {
    // Another flagos device's operand (an op that spans devices) keeps its
    // own device on cuda, where the kernel handles each device's tensors.
    if (target_ == BoxingTarget::Cuda) device = cuda_device_of(own);
    if (std::find(other_devices_.begin(), other_devices_.end(), own) == other_devices_.end())
      other_devices_.push_back(own);
  }
  // A storage of its own, labelled with the target device: views the kernel
  // takes of the alias get their device from the storage. Non-owning: the
  // flagos tensor, alive on the caller's stack, owns the bytes.
  c10::StorageImpl* impl = t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
  at::Tensor alias;
  const Alias* sibling = nullptr;
  if (!in_list)
    for (const Alias& a : aliases_)
      if (a.flagos.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl() == impl &&
          a.boxed.device() == device)
        sibling = &a;
  if (sibling) {
    alias = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(sibling->storage)), target_keys_, t.dtype());
  } else if (spare_ && !spare_->empty()) {
    alias = std::move(spare_->back());
    spare_->pop_back();
    // A spare of this target keeps its allocator (grow_); only what differs
    // from the operand is set.
    c10::StorageImpl* storage = alias.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
    if (storage->data() != impl->data() || storage->device() != device)
      storage->set_data_ptr_noswap(c10::DataPtr(impl->mutable_data(), device));
    if (storage->nbytes() != impl->nbytes()) storage->set_nbytes(impl->nbytes());
    if (storage->resizable() != impl->resizable()) storage->set_resizable(impl->resizable());
    // The storage object is the same: only a new dtype or device (another
    // flagos device's operand) needs the TensorImpl to re-read it.
    if (alias.dtype() != t.dtype() || alias.device() != device)
      alias.unsafeGetTensorImpl()->set_storage_and_dtype(alias.storage(), t.dtype());
  } else {
    if (!grow_) grow_ = target_ == BoxingTarget::Cpu ? flagos_as_cpu_allocator() : c10::GetAllocator(c10::kCUDA);
    auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), impl->nbytes(),
                                                         c10::DataPtr(impl->mutable_data(), device), grow_,
                                                         impl->resizable());
    alias = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(std::move(storage)), target_keys_, t.dtype());
  }
  c10::StorageImpl* created = alias.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
  // Setting sizes and strides recomputes every contiguity flag: a good
  // share of boxing's cost, skipped when a reused alias already has them.
  if (alias.sizes() != t.sizes() || alias.strides() != t.strides() || alias.storage_offset() != t.storage_offset())
    alias.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  if (alias.is_conj() != t.is_conj()) alias._set_conj(t.is_conj());
  if (alias.is_neg() != t.is_neg()) alias._set_neg(t.is_neg());
  aliases_.push_back({t, std::move(alias), created, written});
  return aliases_.back().boxed;
}

c10::Device BoxingCall::box(c10::Device d) const {
  return d.type() == c10::DeviceType::PrivateUse1 ? target_device_ : d;
}

at::Generator BoxingCall::box_generator(const std::optional<at::Generator>& gen) const {
  return device::engine_for(gen && gen->defined() ? *gen : at::Generator(), device_);
}

void BoxingCall::run(const OpTraits& op, c10::function_ref<void()> kernel) {
  if (!other_devices_.empty()) [[unlikely]]
    op.check_devices(device_, other_devices_.front(), /*host_kernel=*/target_ == BoxingTarget::Cpu);
  // On cuda, torch's CUDA kernel judges its operands' devices itself.
  if (foreign_.defined() && target_ == BoxingTarget::Cpu)
    check_foreign_operand(op.foreign_operands, op.name, device_, foreign_);
  if (target_ == BoxingTarget::Cpu) {
    // The kernel runs now, on the host: queued device work must finish first.
    device::refuse_host_route_in_capture(device_, op.name, "cpu");
    wait_for_stream(device_);
    for (c10::DeviceIndex d : other_devices_) wait_for_stream(d);
    HostAllocationScope scope(device_);
    device::SeededCpuScope seeded(device_, op.draws_default_generator);
    kernel();
  } else {
    if (op.draws_default_generator && !no_draw_) device::refuse_random_in_capture(device_);  // dropout & co
    CudaStreamScope scope(device_, other_devices_);
    kernel();
  }
  for (const Alias& a : aliases_)
    if (a.written) sync_back(a);
}

// An out=/in-place operand whose alias the kernel resized or re-pointed.
void BoxingCall::sync_back(const Alias& a) const {
  c10::TensorImpl* flagos = a.flagos.unsafeGetTensorImpl();
  c10::StorageImpl* now = a.boxed.storage().unsafeGetStorageImpl();
  c10::StorageImpl* mine = a.flagos.storage().unsafeGetStorageImpl();
  if (now == a.storage && now->data() != mine->data()) {
    c10::DataPtr grown = std::move(now->mutable_data_ptr());  // adopt the grown block
    const c10::Device boxed_device = grown.device();
    grown.unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, device_));
    mine->set_data_ptr_noswap(std::move(grown));
    mine->set_nbytes(now->nbytes());
    // The alias (which other operands of this storage may share) borrows it.
    now->set_data_ptr_noswap(c10::DataPtr(mine->mutable_data(), boxed_device));
  } else if (now != a.storage) {
    // The kernel pointed the operand at other memory (set_): take its values.
    if (a.flagos.sizes() != a.boxed.sizes()) a.flagos.resize_(a.boxed.sizes());
    aten::write_into(a.flagos, a.boxed.device().is_cpu() ? a.boxed : a.boxed.cpu());
    return;
  }
  if (flagos->sizes() != a.boxed.sizes() || flagos->strides() != a.boxed.strides() ||
      flagos->storage_offset() != a.boxed.storage_offset())
    flagos->set_sizes_and_strides(a.boxed.sizes(), a.boxed.strides(), a.boxed.storage_offset());
}

at::Tensor BoxingCall::keep_on_host(const at::Tensor& t) const {
  if (!t.defined() || !t.device().is_cpu()) return unbox(t);
  const bool borrowed = target_ == BoxingTarget::Cpu &&
                        is_flagos_allocation(t.unsafeGetTensorImpl()->unsafe_storage().data_ptr());
  return borrowed ? t.clone() : t;
}

at::Tensor BoxingCall::unbox(const at::Tensor& t) const {
  if (!t.defined() || t.device().type() == c10::DeviceType::PrivateUse1) return t;
  // A CUDA kernel's host result (the attention kernels' philox seed and
  // offset) stays on the host, as on native CUDA: copying it over costs a
  // transfer per call, and the backward kernel wants it on the host anyway.
  if (target_ == BoxingTarget::Cuda && t.device().is_cpu()) return t;
  c10::StorageImpl* storage = t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
  // A view of an operand has its alias's storage, which does not own its
  // bytes (a deleter that deletes nothing): only such a result is searched
  // for, so that a foreach op's hundreds of fresh results do not each scan
  // hundreds of aliases.
  if (storage->data_ptr().get_deleter() == &c10::detail::deleteNothing) {
    for (const Alias& a : aliases_)
      if (storage == a.storage) return flagos_over(a.flagos.storage(), t);
  }
  const bool ours = target_ == BoxingTarget::Cpu ? is_flagos_allocation(storage->data_ptr())
                                                 : t.device().type() == c10::kCUDA;
  if (ours) {
    // Per-tensor work of an op spanning devices allocates on each tensor's.
    c10::DeviceIndex home = device_;
    if (target_ == BoxingTarget::Cuda && t.device().index() != target_device_.index())
      home = flagos_of_cuda(t.device().index(), device_);
    storage->mutable_data_ptr().unsafe_set_device(c10::Device(c10::DeviceType::PrivateUse1, home));
    storage->set_allocator(device::allocator());
    return relabel(t, home);
  }
  // Ordinary host memory (a cached constant, a scalar): copy it over.
  at::Tensor host = t.device().is_cpu() ? t : t.cpu();
  at::Tensor out = at::empty_strided(host.sizes(), host.strides(),
                                     host.options().device(c10::Device(c10::DeviceType::PrivateUse1, device_)));
  aten::write_into(out, host);
  return out;
}

}  // namespace flagos::routes
