#include <atomic>
#include <cstring>
#include <memory>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "handles.h"
#include "pointers.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::copy_kind_name;

// Checks both ends of a `kind` copy against `device` (the stream's); for a
// copy with a host end, *host_pinned tells whether that end is page-locked.
flagos_status_t check_ends(const char* fn, void* dst, const void* src, int32_t kind, int32_t device,
                           bool* host_pinned) {
  const bool dst_dev = flagos::kit::copy_dst_is_device(kind);
  const bool src_dev = flagos::kit::copy_src_is_device(kind);
  bool pinned_dst = false, pinned_src = false;
  flagos_status_t st = dst_dev ? expect_device(fn, "dst", dst, device) : expect_host(fn, "dst", dst, &pinned_dst);
  if (st == FLAGOS_SUCCESS)
    st = src_dev ? expect_device(fn, "src", src, device) : expect_host(fn, "src", src, &pinned_src);
  *host_pinned = dst_dev ? pinned_src : pinned_dst;
  return st;
}

// Enqueues the copy on `stream`. The host-buffer rule of memcpy_async: the
// runtime stages a pageable H2D source before returning; a pageable D2H
// destination is complete only after a synchronize; host-to-host copies run
// here, after the stream's earlier work.
flagos_status_t enqueue_copy(const char* fn, void* dst, const void* src, uint64_t size, int32_t kind,
                             bool host_pinned, Stream& stream) {
  const Runtime& r = rt();
  int err = 0;
  if (kind == FLAGOS_MEMCPY_HOST_TO_HOST) {
    rt_stream pending = stream.existing();
    if (pending != nullptr && (err = r.stream_synchronize(pending)) != 0)
      return rt_fail(fn, err, "StreamSynchronize before a host-to-host copy");
    std::memmove(dst, src, size);
    return FLAGOS_SUCCESS;
  }
  rt_stream s = nullptr;
  flagos_status_t st = stream.native(fn, &s);
  if (st != FLAGOS_SUCCESS) return st;
  // A copy with pageable host memory is synchronous: on a capturing stream
  // the synchronize fails and invalidates the capture (flagos/ext/graphs.h).
  int capturing = 0;
  if (!host_pinned && kind != FLAGOS_MEMCPY_DEVICE_TO_DEVICE && r.stream_is_capturing != nullptr &&
      r.stream_is_capturing(s, &capturing) == 0 && capturing != 0 && (err = r.stream_synchronize(s)) != 0)
    return rt_fail(fn, err, "StreamSynchronize (a copy with pageable host memory during stream capture)");
  err = r.memcpy_async(dst, src, size, vendor().memcpy_kind[kind], s);
  if (err != 0)
    return rt_fail(fn, err, "MemcpyAsync(%s, %llu bytes) on device %d", copy_kind_name(kind),
                   static_cast<unsigned long long>(size), stream.device());
  if (kind == FLAGOS_MEMCPY_DEVICE_TO_HOST && !host_pinned && (err = r.stream_synchronize(s)) != 0)
    return rt_fail(fn, err, "StreamSynchronize after a copy into pageable memory");
  return FLAGOS_SUCCESS;
}

// The device a synchronous copy runs on: the one its device pointer belongs to.
flagos_status_t sync_copy_device(const char* fn, const void* dst, const void* src, int32_t kind,
                                 int32_t* device) {
  const void* on_device = kind == FLAGOS_MEMCPY_DEVICE_TO_HOST ? src : dst;
  Pointer p = classify(on_device);
  if (p.memory != Memory::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p of a %s copy is not device memory", fn,
                on_device == dst ? "dst" : "src", on_device, copy_kind_name(kind));
  *device = p.device;
  return check_device(fn, p.device);
}

// Peer access is enabled once per (device, peer) pair, so that peer copies
// take the direct path instead of a staging round trip through the host.
void enable_peer_access(int32_t device, int32_t peer) {
  const int32_t n = flagos_cudalike::device_count();
  static std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[static_cast<size_t>(n) * n]());
  std::atomic<bool>& flag = done[static_cast<size_t>(device) * n + peer];
  const Runtime& r = rt();
  if (!can_access_peer(device, peer) || r.device_enable_peer_access == nullptr || flag.exchange(true)) return;
  if (r.device_enable_peer_access(peer, 0) != 0) r.get_last_error();  // already enabled, or not possible
}

}  // namespace

flagos_status_t Plugin::memcpy_sync(void* dst, const void* src, uint64_t size, int32_t kind) {
  static const char* fn = "memcpy_sync";
  return guarded(fn, [&] {
    flagos_status_t st = flagos::kit::check_copy_kind(fn, kind);
    if (st != FLAGOS_SUCCESS || size == 0) return st;  // size 0 touches neither pointer
    if (kind == FLAGOS_MEMCPY_HOST_TO_HOST) {  // no device, nothing to be ordered after
      std::memmove(dst, src, size);
      return FLAGOS_SUCCESS;
    }
    int32_t device = -1;
    bool host_pinned = false;
    DeviceScope scope;
    st = sync_copy_device(fn, dst, src, kind, &device);
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st == FLAGOS_SUCCESS) st = check_ends(fn, dst, src, kind, device, &host_pinned);
    if (st != FLAGOS_SUCCESS) return st;
    // On the default stream, after its earlier work, and complete on return.
    std::shared_ptr<Stream> s = default_stream_object(device);
    rt_stream native = nullptr;
    st = enqueue_copy(fn, dst, src, size, kind, host_pinned, *s);
    if (st == FLAGOS_SUCCESS) st = s->native(fn, &native);
    if (st != FLAGOS_SUCCESS) return st;
    int err = rt().stream_synchronize(native);
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "StreamSynchronize (default stream)");
  });
}

flagos_status_t Plugin::memcpy_async(void* dst, const void* src, uint64_t size, int32_t kind,
                                     flagos_stream_t stream) {
  static const char* fn = "memcpy_async";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = streams().find(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = flagos::kit::check_copy_kind(fn, kind);
    if (st != FLAGOS_SUCCESS || size == 0) return st;
    bool host_pinned = false;
    DeviceScope scope;
    st = scope.enter(fn, s->device());
    if (st == FLAGOS_SUCCESS) st = check_ends(fn, dst, src, kind, s->device(), &host_pinned);
    if (st != FLAGOS_SUCCESS) return st;
    return enqueue_copy(fn, dst, src, size, kind, host_pinned, *s);
  });
}

flagos_status_t Plugin::memcpy_peer_async(void* dst, flagos_device_t dst_device, const void* src,
                                          flagos_device_t src_device, uint64_t size, flagos_stream_t stream) {
  static const char* fn = "memcpy_peer_async";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, dst_device);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, src_device);
    std::shared_ptr<Stream> s;
    if (st == FLAGOS_SUCCESS) st = streams().find(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != dst_device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, not on dst device %d", fn,
                  static_cast<void*>(stream), s->device(), dst_device);
    if (size == 0) return FLAGOS_SUCCESS;
    DeviceScope scope;
    rt_stream native = nullptr;
    st = s->enter(fn, scope, &native);  // dst_device's
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "dst", dst, dst_device);
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "src", src, src_device);
    if (st != FLAGOS_SUCCESS) return st;
    const Runtime& r = rt();
    if (r.memcpy_peer_async == nullptr)
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: the %s runtime has no %sMemcpyPeerAsync", fn, vendor().display,
                  vendor().prefix);
    if (src_device != dst_device) enable_peer_access(dst_device, src_device);
    int err = r.memcpy_peer_async(dst, dst_device, src, src_device, size, native);
    return err == 0 ? FLAGOS_SUCCESS
                    : rt_fail(fn, err, "MemcpyPeerAsync(device %d -> %d, %llu bytes)", src_device, dst_device,
                              static_cast<unsigned long long>(size));
  });
}

flagos_status_t Plugin::memset_async(void* dst, uint8_t value, uint64_t size, flagos_stream_t stream) {
  static const char* fn = "memset_async";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = streams().find(fn, stream, &s);
    if (st != FLAGOS_SUCCESS || size == 0) return st;
    DeviceScope scope;
    rt_stream native = nullptr;
    st = s->enter(fn, scope, &native);
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "dst", dst, s->device());
    if (st != FLAGOS_SUCCESS) return st;
    int err = rt().memset_async(dst, value, size, native);
    return err == 0 ? FLAGOS_SUCCESS
                    : rt_fail(fn, err, "MemsetAsync(%llu bytes) on device %d", static_cast<unsigned long long>(size),
                              s->device());
  });
}

}  // namespace flagos_cudalike
