#include <cstring>

#include "api.h"
#include "capture_mode.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "pointers.h"
#include "vendor.h"

namespace flagos_cudalike {

using flagos::kit::need;

flagos_status_t Plugin::mem_alloc(flagos_device_t device, uint64_t size, void** ptr) {
  static const char* fn = "mem_alloc";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, ptr, "ptr");
    if (st != FLAGOS_SUCCESS) return st;
    if (size == 0) {
      *ptr = nullptr;
      return FLAGOS_SUCCESS;
    }
    // Also keeps sizes that overflow the runtime's rounding away from it.
    uint64_t total = properties(device).total_memory;
    if (size > total)
      return fail(FLAGOS_ERROR_OUT_OF_MEMORY, "%s: %llu bytes requested on device %d, which has %llu in all",
                  fn, static_cast<unsigned long long>(size), device, static_cast<unsigned long long>(total));
    DeviceScope scope;
    st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    void* p = nullptr;
    RelaxedCaptureMode relaxed;  // a capture underway on this thread must not refuse it
    int err = rt().malloc(&p, size);
    if (err != 0)
      return rt_fail(fn, err, "Malloc(%llu bytes) on device %d", static_cast<unsigned long long>(size), device);
    note_block(p, size, Memory::kDevice, device);
    *ptr = p;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::mem_free(flagos_device_t device, void* ptr) {
  static const char* fn = "mem_free";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS || ptr == nullptr) return st;
    DeviceScope scope;
    st = expect_device(fn, "ptr", ptr, device);
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    // Forgotten first: once freed, the runtime may hand the address to
    // another thread's allocation, whose record this must not erase.
    const size_t size = forget_block(ptr);
    int err = rt().free(ptr);  // waits for work still using the block
    if (err != 0) {
      if (size != 0) note_block(ptr, size, Memory::kDevice, device);
      return rt_fail(fn, err, "Free(%p) on device %d", ptr, device);
    }
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::host_alloc(uint64_t size, void** ptr) {
  static const char* fn = "host_alloc";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, ptr, "ptr");
    if (st != FLAGOS_SUCCESS) return st;
    if (size == 0) {
      *ptr = nullptr;
      return FLAGOS_SUCCESS;
    }
    const Vendor& v = vendor();
    if (!v.pinned_host)
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: %s has no page-locked host memory (no FLAGOS_CAP_PINNED_HOST)",
                  fn, v.display);
    if (flagos_cudalike::device_count() == 0)
      return fail(FLAGOS_ERROR_RUNTIME_UNAVAILABLE, "%s: no %s device, so no page-locked memory", fn, v.display);
    // Page-locking needs a context: the caller's current device's. Portable
    // memory is then usable by async copies on every device.
    int32_t device = 0;
    st = current_device(fn, &device);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    void* p = nullptr;
    const Runtime& r = rt();
    int err = r.host_alloc_flags ? r.host_alloc_flags(&p, size, static_cast<unsigned>(v.host_alloc_flags))
                                 : r.host_alloc_plain(&p, size);
    if (err != 0 && status_of(err) == FLAGOS_ERROR_OUT_OF_MEMORY) {
      r.get_last_error();
      return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: %s(%llu bytes) failed: out of page-locked memory", fn,
                  v.host_alloc, static_cast<unsigned long long>(size));
    }
    if (err != 0) return rt_fail(fn, err, "%s(%llu bytes)", v.host_alloc + std::strlen(v.prefix),
                                 static_cast<unsigned long long>(size));
    note_block(p, size, Memory::kPinned, -1);
    *ptr = p;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::host_free(void* ptr) {
  static const char* fn = "host_free";
  return guarded(fn, [&] {
    if (ptr == nullptr) return FLAGOS_SUCCESS;
    if (!vendor().pinned_host)
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: %s has no page-locked host memory (no FLAGOS_CAP_PINNED_HOST)",
                  fn, vendor().display);
    flagos_status_t st = runtime_ready(fn);
    if (st != FLAGOS_SUCCESS) return st;
    const size_t size = forget_block(ptr);  // first, as in mem_free
    int err = rt().host_free(ptr);
    if (err != 0) {
      if (size != 0) note_block(ptr, size, Memory::kPinned, -1);
      return rt_fail(fn, err, "%s(%p)", vendor().host_free + std::strlen(vendor().prefix), ptr);
    }
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::pointer_get_attributes(const void* ptr, int32_t* kind, flagos_device_t* device) {
  static const char* fn = "pointer_get_attributes";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, kind, "kind");
    if (st == FLAGOS_SUCCESS) st = need(fn, device, "device");
    if (st != FLAGOS_SUCCESS) return st;
    const Pointer p = classify(ptr);
    *kind = p.memory == Memory::kDevice   ? FLAGOS_POINTER_DEVICE
            : p.memory == Memory::kPinned ? FLAGOS_POINTER_PINNED_HOST
                                          : FLAGOS_POINTER_UNKNOWN;
    *device = p.memory == Memory::kDevice ? p.device : -1;
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_cudalike
