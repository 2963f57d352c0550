// Device and pinned allocations.
#include <cstring>

#include "api.h"
#include "call.h"

namespace simrt {

int malloc_device(const Vendor& v, const char* sym, void** ptr, size_t size) {
  Call c(v, sym, Api::Runtime, Err::MemoryAllocation);
  if (c.blocked()) return c.result();
  if (ptr == nullptr) return c.rule(Err::InvalidValue, "devPtr is NULL");
  int err, d = c.current_device();
  if (c.bad_device(d, &err)) return err;
  c.touch(d);
  if (size == 0) {  // CUDA: success, and no allocation
    *ptr = nullptr;
    return c.ok();
  }
  // Over the cap: MemoryAllocation, and the runtime stays usable (not sticky).
  if (!c.rt.memory().alloc_device(d, size, ptr)) return c.fail(Err::MemoryAllocation);
  return c.ok();
}

int free_device(const Vendor& v, const char* sym, void* ptr) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (ptr == nullptr) return c.ok();
  int d;
  if (!c.rt.memory().find_device(ptr, &d))
    return c.rule(Err::InvalidValue, "%p is not the start of a live device allocation", ptr);
  // Implicit synchronisation, as CUDA's: pending work on the device may still use it.
  c.rt.sync_device(d);
  c.rt.memory().release_device(ptr);
  return c.ok();
}

int host_alloc(const Vendor& v, const char* sym, void** ptr, size_t size, unsigned flags) {
  Call c(v, sym, Api::Runtime, Err::MemoryAllocation);
  if (c.blocked()) return c.result();
  if (ptr == nullptr) return c.rule(Err::InvalidValue, "ptr is NULL");
  if (flags & ~v.host_alloc_flags_mask)
    return c.rule(Err::InvalidValue, "flags 0x%x are not valid pinned-allocation flags (mask 0x%x)", flags,
                  v.host_alloc_flags_mask);
  int err, d = c.current_device();
  if (c.bad_device(d, &err)) return err;
  c.touch(d);
  *ptr = c.rt.memory().alloc_pinned(size);
  return *ptr == nullptr ? c.fail(Err::MemoryAllocation) : c.ok();
}

int free_host(const Vendor& v, const char* sym, void* ptr) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (ptr == nullptr) return c.ok();
  // Pinned copies are truly asynchronous: let them finish before the pages go.
  c.rt.sync_all();
  if (!c.rt.memory().free_pinned(ptr))
    return c.rule(Err::InvalidValue, "%p is not a pinned allocation of this runtime", ptr);
  return c.ok();
}

namespace {

// cudaPointerAttributes as CUDA 13's driver_types.h lays it out.
struct PointerAttributes13 {
  int type;  // cudaMemoryType: 0 unregistered, 1 host, 2 device, 3 managed
  int device;
  void* device_pointer;
  void* host_pointer;
  long reserved[8];
};

}  // namespace

int pointer_get_attributes(const Vendor& v, const char* sym, void* attributes, const void* ptr) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (attributes == nullptr) return c.rule(Err::InvalidValue, "attributes is NULL");
  PointerAttributes13 a{};
  const Span s = c.rt.memory().classify(ptr, 1);
  a.device = -2;  // what CUDA reports for unregistered memory
  if (s.kind == Span::Device) {
    a.type = 2;
    a.device = s.device;
    a.device_pointer = const_cast<void*>(ptr);
  } else if (s.kind == Span::Pinned) {
    a.type = 1;
    a.host_pointer = a.device_pointer = const_cast<void*>(ptr);
  } else if (s.kind == Span::Pageable) {
    a.host_pointer = const_cast<void*>(ptr);
  }
  std::memcpy(attributes, &a, sizeof a);  // the whole struct, as the runtime does
  return c.ok();
}

}  // namespace simrt
