#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "fork_guard.h"
#include "handles.h"
#include "pointers.h"

namespace flagos_cuda {
namespace {

flagos_status_t check_kind(const char* fn, int32_t kind) {
  if (kind >= FLAGOS_MEMCPY_HOST_TO_HOST && kind <= FLAGOS_MEMCPY_DEVICE_TO_DEVICE)
    return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: unknown copy kind %d", fn, kind);
}

cudaMemcpyKind cuda_kind(int32_t kind) {
  switch (kind) {
    case FLAGOS_MEMCPY_HOST_TO_DEVICE: return cudaMemcpyHostToDevice;
    case FLAGOS_MEMCPY_DEVICE_TO_HOST: return cudaMemcpyDeviceToHost;
    case FLAGOS_MEMCPY_DEVICE_TO_DEVICE: return cudaMemcpyDeviceToDevice;
    default: return cudaMemcpyHostToHost;
  }
}

const char* kind_name(int32_t kind) {
  static const char* names[] = {"host-to-host", "host-to-device", "device-to-host",
                                "device-to-device"};
  return names[kind];
}

// Checks both ends of a `kind` copy against `device` (the stream's); for a
// copy with a host end, *host_pinned tells whether that end is page-locked.
flagos_status_t check_ends(const char* fn, void* dst, const void* src, int32_t kind, int32_t device,
                           bool* host_pinned) {
  bool dst_dev = kind == FLAGOS_MEMCPY_HOST_TO_DEVICE || kind == FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
  bool src_dev = kind == FLAGOS_MEMCPY_DEVICE_TO_HOST || kind == FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
  bool pinned_dst = false, pinned_src = false;
  flagos_status_t st = dst_dev ? expect_device(fn, "dst", dst, device)
                               : expect_host(fn, "dst", dst, &pinned_dst);
  if (st == FLAGOS_SUCCESS)
    st = src_dev ? expect_device(fn, "src", src, device) : expect_host(fn, "src", src, &pinned_src);
  *host_pinned = dst_dev ? pinned_src : pinned_dst;
  return st;
}

// Enqueues the copy on `cs`. The host-buffer rule of memcpy_async: CUDA
// stages a pageable H2D source before returning; a pageable D2H destination
// is complete only after a synchronize; host-to-host copies run here, after
// the stream's earlier work.
flagos_status_t enqueue_copy(const char* fn, void* dst, const void* src, uint64_t size, int32_t kind,
                             bool host_pinned, Stream& stream) {
  cudaError_t err = cudaSuccess;
  if (kind == FLAGOS_MEMCPY_HOST_TO_HOST) {
    cudaStream_t pending = stream.existing();
    if (pending != nullptr && (err = cudaStreamSynchronize(pending)) != cudaSuccess)
      return cuda_fail(fn, err, "cudaStreamSynchronize before a host-to-host copy");
    std::memmove(dst, src, size);
    return FLAGOS_SUCCESS;
  }
  cudaStream_t cs = nullptr;
  flagos_status_t st = stream.cuda(fn, &cs);
  if (st != FLAGOS_SUCCESS) return st;
  err = cudaMemcpyAsync(dst, src, size, cuda_kind(kind), cs);
  if (err != cudaSuccess)
    return cuda_fail(fn, err, "cudaMemcpyAsync(%s, %llu bytes) on device %d", kind_name(kind),
                     static_cast<unsigned long long>(size), stream.device());
  if (kind == FLAGOS_MEMCPY_DEVICE_TO_HOST && !host_pinned && (err = cudaStreamSynchronize(cs)) != cudaSuccess)
    return cuda_fail(fn, err, "cudaStreamSynchronize after a copy into pageable memory");
  return FLAGOS_SUCCESS;
}

// The device a synchronous copy runs on: the one its device pointer belongs to.
flagos_status_t sync_copy_device(const char* fn, const void* dst, const void* src, int32_t kind,
                                 int32_t* device) {
  const void* on_device = kind == FLAGOS_MEMCPY_DEVICE_TO_HOST ? src : dst;
  Pointer p = classify(on_device);
  if (p.memory != Memory::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p of a %s copy is not device memory", fn,
                on_device == dst ? "dst" : "src", on_device, kind_name(kind));
  *device = p.device;
  return check_device(fn, p.device);
}

// Peer access is enabled once per (device, peer) pair, so that peer copies
// take the direct path instead of a staging round trip through the host.
void enable_peer_access(int32_t device, int32_t peer) {
  static std::unique_ptr<std::atomic<bool>[]> done(
      new std::atomic<bool>[static_cast<size_t>(device_count()) * device_count()]());
  std::atomic<bool>& flag = done[static_cast<size_t>(device) * device_count() + peer];
  if (!can_access_peer(device, peer) || flag.exchange(true)) return;
  cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);  // the scope made `device` current
  if (err != cudaSuccess) cudaGetLastError();  // already enabled, or not possible: copies still work
}

}  // namespace

flagos_status_t api_memcpy_sync(void* dst, const void* src, uint64_t size, int32_t kind) {
  static const char* fn = "memcpy_sync";
  return guarded(fn, [&] {
    flagos_status_t st = check_kind(fn, kind);
    if (st != FLAGOS_SUCCESS || size == 0) return st;  // size 0 touches neither pointer
    if (kind == FLAGOS_MEMCPY_HOST_TO_HOST) {  // no device, nothing to be ordered after
      std::memmove(dst, src, size);
      return FLAGOS_SUCCESS;
    }
    int32_t device = -1;
    bool host_pinned = false;
    DeviceScope scope;
    st = runtime_ready(fn);
    if (st == FLAGOS_SUCCESS) st = sync_copy_device(fn, dst, src, kind, &device);
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st == FLAGOS_SUCCESS) st = check_ends(fn, dst, src, kind, device, &host_pinned);
    if (st != FLAGOS_SUCCESS) return st;
    // On the default stream, after its earlier work, and complete on return.
    std::shared_ptr<Stream> s = default_stream_object(device);
    cudaStream_t cs = nullptr;
    st = enqueue_copy(fn, dst, src, size, kind, host_pinned, *s);
    if (st == FLAGOS_SUCCESS) st = s->cuda(fn, &cs);
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaStreamSynchronize(cs);
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaStreamSynchronize (default stream)");
  });
}

flagos_status_t api_memcpy_async(void* dst, const void* src, uint64_t size, int32_t kind,
                                 flagos_stream_t stream) {
  static const char* fn = "memcpy_async";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = check_kind(fn, kind);
    if (st != FLAGOS_SUCCESS || size == 0) return st;
    bool host_pinned = false;
    DeviceScope scope;
    st = scope.enter(fn, s->device());
    if (st == FLAGOS_SUCCESS) st = check_ends(fn, dst, src, kind, s->device(), &host_pinned);
    if (st != FLAGOS_SUCCESS) return st;
    return enqueue_copy(fn, dst, src, size, kind, host_pinned, *s);
  });
}

flagos_status_t api_memcpy_peer_async(void* dst, flagos_device_t dst_device, const void* src,
                                      flagos_device_t src_device, uint64_t size,
                                      flagos_stream_t stream) {
  static const char* fn = "memcpy_peer_async";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, dst_device);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, src_device);
    std::shared_ptr<Stream> s;
    if (st == FLAGOS_SUCCESS) st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != dst_device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, not on dst device %d",
                  fn, static_cast<void*>(stream), s->device(), dst_device);
    if (size == 0) return FLAGOS_SUCCESS;
    DeviceScope scope;
    cudaStream_t cs = nullptr;
    st = s->enter(fn, scope, &cs);  // dst_device's
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "dst", dst, dst_device);
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "src", src, src_device);
    if (st != FLAGOS_SUCCESS) return st;
    if (src_device != dst_device) enable_peer_access(dst_device, src_device);
    cudaError_t err = cudaMemcpyPeerAsync(dst, dst_device, src, src_device, size, cs);
    return err == cudaSuccess ? FLAGOS_SUCCESS
                              : cuda_fail(fn, err, "cudaMemcpyPeerAsync(device %d -> %d, %llu bytes)",
                                          src_device, dst_device, static_cast<unsigned long long>(size));
  });
}

flagos_status_t api_memset_async(void* dst, uint8_t value, uint64_t size, flagos_stream_t stream) {
  static const char* fn = "memset_async";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS || size == 0) return st;
    DeviceScope scope;
    cudaStream_t cs = nullptr;
    st = s->enter(fn, scope, &cs);
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "dst", dst, s->device());
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaMemsetAsync(dst, value, size, cs);
    return err == cudaSuccess ? FLAGOS_SUCCESS
                              : cuda_fail(fn, err, "cudaMemsetAsync(%llu bytes) on device %d",
                                          static_cast<unsigned long long>(size), s->device());
  });
}

}  // namespace flagos_cuda
