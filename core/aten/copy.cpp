// Copies into, out of and between flagos devices (aten::_copy_from, which
// copy_ and .to() reach), plus _copy_from_and_resize, _to_copy's same-device
// casts and item().
// Fast paths are single plugin copies. Within one device, a dtype change,
// broadcast, strided layout or differing conjugate/negative bits run the
// stock device's copy kernel on the bytes (routes/boxing.h: CUDA on CUDA-ABI
// plugins, CPU on host-addressable ones): autocast casts and .contiguous()
// must not leave the device. Elsewhere they are staged through the host
// (transfer.h).
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/_to_copy_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/transfer.h"
#include "device/events.h"
#include "device/host_allocator.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "routes/boxing.h"

namespace flagos::aten {
namespace {

void sync_stream(c10::DeviceIndex device) {
  const auto& plugin = device::active_plugin();
  plugin.check(plugin.api().stream_synchronize(device::current_native(device)), "stream_synchronize");
}

// Orders `waiter`'s current stream after the work now on `waited`'s.
void stream_wait(c10::DeviceIndex waiter, c10::DeviceIndex waited) {
  const auto& plugin = device::active_plugin();
  device::Event* e = device::create_event(waited, false);
  device::record_event(e, device::current_native(waited));
  plugin.check(plugin.api().stream_wait_event(device::current_native(waiter), e->handle),
               "stream_wait_event");
  device::destroy_event(e);  // legal while pending (ABI)
}

void device_to_device(const at::Tensor& src, const at::Tensor& dst) {
  const auto& plugin = device::active_plugin();
  const auto s = src.device().index(), d = dst.device().index();
  const Span span = span_of(dst);
  const char* from = static_cast<const char*>(src.storage().data()) + span_of(src).begin;
  char* to = static_cast<char*>(dst.storage().mutable_data()) + span.begin;
  if (s == d) {
    plugin.check(plugin.api().memcpy_async(to, from, span.size(), FLAGOS_MEMCPY_DEVICE_TO_DEVICE,
                                           device::current_native(d)),
                 "memcpy_async (device to device)");
    return;
  }
  // Across devices: dst's stream waits for src's producers; src's stream then
  // waits for the copy so that src is not overwritten or reused early.
  stream_wait(d, s);
  plugin.check(plugin.api().memcpy_peer_async(to, d, from, s, span.size(), device::current_native(d)),
               "memcpy_peer_async");
  stream_wait(s, d);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  if (dst.numel() == 0) return dst;
  // copy_ leaves these checks to _copy_from for PrivateUse1 (CPU and CUDA
  // make them in TensorIterator): a plugin memcpy over overlapping bytes is
  // undefined.
  at::assert_no_internal_overlap(dst);
  at::assert_no_partial_overlap(dst, self);
  const bool same_bytes =
      self.dtype() == dst.dtype() && same_math_bits(self, dst) && same_dense_layout(self, dst);
  if (is_flagos(self) && is_flagos(dst)) {
    const auto& plugin = device::active_plugin();
    const bool can_peer = self.device() == dst.device() || plugin.api().memcpy_peer_async;
    const auto target = routes::stock_target(dst.device().index());
    if (same_bytes && can_peer) {
      device_to_device(self, dst);
    } else if (self.device() == dst.device() && target) {
      routes::boxed_copy(*target, dst, self);
    } else {
      write_into(dst, download_values(self));
    }
    return dst;
  }
  if (is_flagos(dst)) {  // host -> flagos
    write_into(dst, self, non_blocking);
    const bool async_ok = non_blocking && device::is_pinned(self.storage().data());
    if (!async_ok) sync_stream(dst.device().index());
    return dst;
  }
  // flagos -> host (or another non-flagos device through a host tensor)
  if (dst.device().is_cpu() && same_bytes) {
    c10::DeviceGuard guard(self.device());
    const Span span = span_of(self);
    char* to = static_cast<char*>(dst.storage().mutable_data()) + span_of(dst).begin;
    const auto& plugin = device::active_plugin();
    const auto device = self.device().index();
    auto stream = device::current_stream(device);
    plugin.check(plugin.api().memcpy_async(to, static_cast<const char*>(self.storage().data()) + span.begin,
                                           span.size(), FLAGOS_MEMCPY_DEVICE_TO_HOST, device::native(stream)),
                 "memcpy_async (device to host)");
    if (non_blocking && device::record_host_use(to, stream)) return dst;
    sync_stream(device);
    return dst;
  }
  dst.copy_(download_values(self));
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

// .to(dtype) on one device (autocast's casts: hundreds per training step).
// torch's composite _to_copy would allocate on flagos and reach _copy_from,
// which boxes a copy_; instead the stock device's own _to_copy runs on the
// operand's bytes and its result is re-labelled, one boxed call in all. A
// change of device or layout, pinning, or a plugin without a stock target
// takes torch's composite kernel, as before.
constexpr size_t kToCopyArgs = 7;  // self, dtype, layout, device, pin_memory, non_blocking, memory_format

bool to_copy_stays_on_device(const c10::IValue* args, c10::DeviceIndex device) {
  const c10::IValue& layout = args[2];
  const c10::IValue& to = args[3];
  const c10::IValue& pin = args[4];
  if (!layout.isNone() && layout.toLayout() != c10::kStrided) return false;
  if (!pin.isNone() && pin.toBool()) return false;
  if (to.isNone()) return true;
  const c10::Device d = to.toDevice();
  if (d.type() != c10::DeviceType::PrivateUse1) return false;
  return (d.has_index() ? d.index() : static_cast<c10::DeviceIndex>(device::current_device())) == device;
}

void to_copy(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  const c10::IValue* args = &*(stack->end() - kToCopyArgs);
  const at::Tensor self = args[0].toTensor();
  // The dispatcher also sends here a host tensor bound for flagos (the device
  // argument's key counts): that is a transfer, torch's kernel does it.
  const bool on_flagos = self.device().type() == c10::DeviceType::PrivateUse1 && self.layout() == c10::kStrided;
  const auto target = on_flagos ? routes::stock_target(self.device().index()) : std::nullopt;
  if (target && to_copy_stays_on_device(args, self.device().index())) {
    static const routes::BoxingPlan plan(op);
    (*target == routes::BoxingTarget::Cpu ? routes::cpu_boxing : routes::cuda_boxing)(op, plan, stack);
    return;
  }
  at::Tensor result = at::native::_to_copy(self, args[1].toOptional<c10::ScalarType>(),
                                           args[2].toOptional<c10::Layout>(), args[3].toOptional<c10::Device>(),
                                           args[4].toOptional<bool>(), args[5].toBool(),
                                           args[6].toOptional<c10::MemoryFormat>());
  torch::jit::drop(*stack, kToCopyArgs);
  torch::jit::push(*stack, std::move(result));
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  return at::_local_scalar_dense(download_values(self));
}

// Conjugate and negative views reach _copy_from with their bits, which it
// applies itself. Without these fallthroughs torch's math fallback would
// materialise the view with clone(), whose copy_ calls _copy_from again with
// the same view: endless recursion on every op without a flagos kernel.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("_to_copy", torch::CppFunction::makeFromBoxedFunction<&to_copy>());
}

}  // namespace
}  // namespace flagos::aten
