#include "memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace simrt {
namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

size_t round_up(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// Address space only: PROT_NONE + NORESERVE commits no memory.
uintptr_t reserve(size_t* size) {
  for (; *size >= kPage; *size /= 2) {
    void* p = mmap(nullptr, *size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) return reinterpret_cast<uintptr_t>(p);
  }
  return 0;
}

// Maps the device view at the fixed address `at`. Guarded: a PROT_NONE view of
// a memfd, plus a read/write alias elsewhere that only the engine knows (the
// trick of plugins/host/strict_mapping.cpp). Returns the alias, or nullptr.
char* map_device(uintptr_t at, size_t len, bool guard) {
  void* want = reinterpret_cast<void*>(at);
  if (!guard) {
    void* p = mmap(want, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  int fd = memfd_create("simrt-device", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* alias = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(len)) == 0 &&
      mmap(want, len, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED)
    alias = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // the mappings keep the pages alive
  return alias == MAP_FAILED ? nullptr : static_cast<char*>(alias);
}

// Gives the pages back and leaves the range reserved (never reused).
void unmap_device(uintptr_t at, size_t len, char* alias, bool guard) {
  if (guard && alias != nullptr) munmap(alias, len);
  mmap(reinterpret_cast<void*>(at), len, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

}  // namespace

Memory::Memory(int devices, size_t cap, bool guard) : cap_(cap), guard_(guard), arenas_(devices) {
  for (Arena& a : arenas_) {
    size_t size = std::max<size_t>(64ull << 30, 4 * round_up(cap));
    a.begin = a.next = reserve(&size);
    a.end = a.begin == 0 ? 0 : a.begin + size;
  }
}

int Memory::device_of(uintptr_t a) const {
  for (size_t d = 0; d < arenas_.size(); ++d)
    if (a >= arenas_[d].begin && a < arenas_[d].end) return static_cast<int>(d);
  return -1;
}

bool Memory::alloc_device(int device, size_t size, void** out) {
  size_t len = round_up(size);
  std::lock_guard<std::mutex> lock(mu_);
  Arena& a = arenas_[device];
  if (a.used + len > cap_ || a.end - a.next < len) return false;
  char* alias = map_device(a.next, len, guard_);
  if (alias == nullptr) return false;
  live_[a.next] = Allocation{size, len, device, alias};
  *out = reinterpret_cast<void*>(a.next);
  a.next += len;
  a.used += len;
  return true;
}

bool Memory::find_device(const void* p, int* device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(p));
  if (it == live_.end()) return false;
  *device = it->second.device;
  return true;
}

void Memory::release_device(const void* p) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(p));
  if (it == live_.end()) return;  // a concurrent double free lost the race
  unmap_device(it->first, it->second.mapped, it->second.alias, guard_);
  arenas_[it->second.device].used -= it->second.mapped;
  live_.erase(it);
}

void* Memory::alloc_pinned(size_t size) {
  void* p = std::aligned_alloc(kPage, round_up(size == 0 ? 1 : size));
  if (p == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  pinned_[reinterpret_cast<uintptr_t>(p)] = size;
  return p;
}

bool Memory::free_pinned(void* p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pinned_.erase(reinterpret_cast<uintptr_t>(p)) == 0) return false;
  }
  std::free(p);
  return true;
}

Span Memory::classify(const void* p, size_t n) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  Span s;
  std::lock_guard<std::mutex> lock(mu_);
  int dev = device_of(a);
  if (dev >= 0) {
    s.device = dev;
    auto it = live_.upper_bound(a);
    if (it == live_.begin() || (--it, a >= it->first + it->second.size)) {
      s.kind = Span::Bad;
      s.why = "is device-address memory outside any live allocation (freed, or past the end)";
      return s;
    }
    size_t off = a - it->first;
    if (n > it->second.size - off) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "runs out of bounds: %zu bytes at offset %zu of a %zu-byte allocation",
                    n, off, it->second.size);
      s.kind = Span::Bad;
      s.why = buf;
      return s;
    }
    s.kind = Span::Device;
    s.rw = it->second.alias + off;
    return s;
  }
  s.rw = static_cast<char*>(const_cast<void*>(p));
  auto it = pinned_.upper_bound(a);
  // Partly pinned ranges are treated as pageable (the conservative path).
  if (it != pinned_.begin() && (--it, a >= it->first && a + n <= it->first + it->second))
    s.kind = Span::Pinned;
  return s;
}

size_t Memory::used(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  return arenas_[device].used;
}

}  // namespace simrt
