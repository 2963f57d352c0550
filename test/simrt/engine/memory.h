// Device and pinned memory over host pages. Each device owns a reserved,
// never-reused address range, so "is this a device pointer, of which device,
// and is it live" is a lookup, and a stale pointer never aliases a new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace simrt {

// Where a range [p, p+n) lies.
struct Span {
  enum Kind { Pageable, Pinned, Device, Bad } kind = Pageable;
  int device = -1;      // Device (and Bad inside a device range)
  char* rw = nullptr;   // the address the engine reads and writes (the guard alias)
  std::string why;      // Bad: which rule the range breaks
};

class Memory {
 public:
  Memory(int devices, size_t cap, bool guard);

  // false: over the cap or out of address space (the runtime stays usable).
  bool alloc_device(int device, size_t size, void** out);
  // Size and device of the live allocation starting at p; false if none.
  bool find_device(const void* p, int* device);
  void release_device(const void* p);  // after the caller synchronised

  void* alloc_pinned(size_t size);
  bool free_pinned(void* p);

  Span classify(const void* p, size_t n);
  size_t used(int device);
  size_t cap() const { return cap_; }

 private:
  struct Allocation {
    size_t size;    // bytes asked for: the bounds checked
    size_t mapped;  // page-rounded bytes mapped
    int device;
    char* alias;    // == base unless guarded
  };
  struct Arena {
    uintptr_t begin = 0, end = 0, next = 0;
    size_t used = 0;
  };
  int device_of(uintptr_t a) const;

  std::mutex mu_;
  size_t cap_;
  bool guard_;
  std::vector<Arena> arenas_;
  std::map<uintptr_t, Allocation> live_;  // device allocations by base
  std::map<uintptr_t, size_t> pinned_;    // pinned host allocations by base
};

}  // namespace simrt
