#include <cstring>

#include "api.h"
#include "copy.h"
#include "devices.h"
#include "handles.h"
#include "kit.h"

namespace flagos_host {

flagos_status_t HostPlugin::memcpy_sync(void* dst, const void* src, uint64_t size,
                                        int32_t kind) {
  static const char* fn = "memcpy_sync";
  return guarded(fn, [&] {
    flagos_status_t st = kit::check_copy_kind(fn, kind);
    if (st != FLAGOS_SUCCESS || size == 0) return st;  // size 0 touches neither pointer
    Endpoint d, s;
    st = resolve_copy(fn, dst, src, size, kind, -1, &d, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (kind == FLAGOS_MEMCPY_HOST_TO_HOST) {  // no device involved: nothing to order after
      std::memmove(d.addr, s.addr, size);
      return FLAGOS_SUCCESS;
    }
    int32_t device = kind == FLAGOS_MEMCPY_DEVICE_TO_HOST ? s.block->device : d.block->device;
    // Ordered after the default stream's work by running on it.
    return enqueue_copy(fn, *default_stream(device), d, s, size, /*wait=*/true);
  });
}

flagos_status_t HostPlugin::memcpy_async(void* dst, const void* src, uint64_t size,
                                         int32_t kind, flagos_stream_t stream) {
  static const char* fn = "memcpy_async";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = kit::check_copy_kind(fn, kind);
    if (st != FLAGOS_SUCCESS || size == 0) return st;
    Endpoint d, sr;
    st = resolve_copy(fn, dst, src, size, kind, s->device(), &d, &sr);
    if (st != FLAGOS_SUCCESS) return st;
    return enqueue_copy(fn, *s, d, sr, size, /*wait=*/false);
  });
}

flagos_status_t HostPlugin::memcpy_peer_async(void* dst, flagos_device_t dst_device,
                                              const void* src, flagos_device_t src_device,
                                              uint64_t size, flagos_stream_t stream) {
  static const char* fn = "memcpy_peer_async";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, dst_device);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, src_device);
    std::shared_ptr<Stream> s;
    if (st == FLAGOS_SUCCESS) st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != dst_device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, not dst device %d",
                  fn, (void*)stream, s->device(), dst_device);
    if (size == 0) return FLAGOS_SUCCESS;
    Endpoint d, sr;
    st = resolve_device(fn, "dst", dst, size, dst_device, &d);
    if (st == FLAGOS_SUCCESS) st = resolve_device(fn, "src", src, size, src_device, &sr);
    if (st != FLAGOS_SUCCESS) return st;
    return enqueue_copy(fn, *s, d, sr, size, /*wait=*/false);
  });
}

flagos_status_t HostPlugin::memset_async(void* dst, uint8_t value, uint64_t size,
                                         flagos_stream_t stream) {
  static const char* fn = "memset_async";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS || size == 0) return st;
    Endpoint d;
    st = resolve_device(fn, "dst", dst, size, s->device(), &d);
    if (st != FLAGOS_SUCCESS) return st;
    return s->enqueue(
        fn,
        [d, value, size] {
          std::memset(d.addr, value, size);
          return FLAGOS_SUCCESS;
        },
        nullptr, TaskTrace{FLAGOS_ACTIVITY_MEMSET, (int64_t)size});
  });
}

}  // namespace flagos_host
