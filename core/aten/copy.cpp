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
#include "routes/typed_boxing_ops.h"

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
      routes::typed_copy(*target, dst, self);
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
// operand's bytes and its result is re-labelled, one typed boxing call in
// all. A change of device or layout, pinning, or a plugin without a stock
// target takes torch's composite kernel, as before.
bool to_copy_stays_on_device(std::optional<c10::Layout> layout, std::optional<c10::Device> to,
                             std::optional<bool> pin, c10::DeviceIndex device) {
  if (layout && *layout != c10::kStrided) return false;
  if (pin && *pin) return false;
  if (!to) return true;
  if (to->type() != c10::DeviceType::PrivateUse1) return false;
  return (to->has_index() ? to->index() : static_cast<c10::DeviceIndex>(device::current_device())) == device;
}

at::Tensor to_copy(const at::Tensor& self, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                   std::optional<c10::Device> device, std::optional<bool> pin_memory, bool non_blocking,
                   std::optional<c10::MemoryFormat> memory_format) {
  // The dispatcher also sends here a host tensor bound for flagos (the device
  // argument's key counts): that is a transfer, torch's kernel does it.
  const bool on_flagos = self.device().type() == c10::DeviceType::PrivateUse1 && self.layout() == c10::kStrided;
  const auto target = on_flagos ? routes::stock_target(self.device().index()) : std::nullopt;
  if (target && to_copy_stays_on_device(layout, device, pin_memory, self.device().index()))
    return routes::typed_to_copy(*target, self, dtype, layout, device, pin_memory, non_blocking, memory_format);
  return at::native::_to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format);
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
  m.impl("_to_copy", TORCH_FN(to_copy));
}

}  // namespace
}  // namespace flagos::aten
