#include "memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "devices.h"
#include "kit.h"
#include "options.h"

namespace flagos_host {
namespace {

using BlockMap = std::map<uintptr_t, std::shared_ptr<Block>>;

// Leaked on purpose: no destructor may run at process exit while workers live.
BlockMap& blocks() {
  static BlockMap* m = new BlockMap;
  return *m;
}

std::atomic<uint64_t> g_used[kMaxDevices];

uint64_t round_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

uint64_t page_size() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// Charges `bytes` to `device`, or reports how much was free.
bool reserve(int32_t device, uint64_t bytes, uint64_t* free_bytes) {
  uint64_t cap = options().capacity_bytes;
  uint64_t cur = g_used[device].load();
  do {
    *free_bytes = cap > cur ? cap - cur : 0;
    if (bytes > *free_bytes) return false;
  } while (!g_used[device].compare_exchange_weak(cur, cur + bytes));
  return true;
}

void insert(const std::shared_ptr<Block>& b) {
  std::lock_guard<std::mutex> lock(memory_mutex());
  blocks()[reinterpret_cast<uintptr_t>(b->addr)] = b;
}

// Removes and returns the block starting exactly at `ptr`, if it has `kind`.
std::shared_ptr<Block> take(void* ptr, BlockKind kind) {
  std::lock_guard<std::mutex> lock(memory_mutex());
  auto it = blocks().find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks().end() || it->second->kind != kind) return nullptr;
  std::shared_ptr<Block> b = std::move(it->second);
  blocks().erase(it);
  return b;
}

// Maps `b->reserved` bytes of file `fd` read/write (strict: the PROT_NONE
// device view and the plugin's alias); returns 0 or an errno.
int map_file(Block* b, int fd) {
  if (options().strict) {
    int err = 0;
    if (!strict_map_file(fd, b->reserved, &b->strict, &err)) return err;
    b->addr = static_cast<uint8_t*>(b->strict.device);
    b->access = static_cast<uint8_t*>(b->strict.alias);
    return 0;
  }
  void* p = mmap(nullptr, b->reserved, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errno;
  b->addr = b->access = static_cast<uint8_t*>(p);
  b->page_mapped = true;
  return 0;
}

// Shareable memory: a memfd of its own, kept open so that another process
// can be given it; returns 0 or an errno.
int map_shareable(Block* b) {
  int fd = memfd_create("flagos-host-shared", MFD_CLOEXEC);
  if (fd < 0) return errno;
  int err = ftruncate(fd, static_cast<off_t>(b->reserved)) == 0 ? map_file(b, fd) : errno;
  if (err != 0) {
    close(fd);
    return err;
  }
  b->fd = fd;
  return 0;
}

// Backs `b` with host memory; returns 0 or an errno.
int map_device_memory(Block* b, bool shareable) {
  if (shareable) return map_shareable(b);
  if (options().strict) {
    int err = 0;
    if (!strict_map(b->reserved, &b->strict, &err)) return err;
    b->addr = static_cast<uint8_t*>(b->strict.device);
    b->access = static_cast<uint8_t*>(b->strict.alias);
    return 0;
  }
  void* p = nullptr;
  int err = posix_memalign(&p, alloc_alignment(), b->reserved);
  if (err != 0) return err;
  b->addr = b->access = static_cast<uint8_t*>(p);
  return 0;
}

}  // namespace

Block::~Block() {
  if (strict.device != nullptr) {
    strict_unmap(strict);
  } else if (page_mapped) {
    munmap(addr, reserved);
  } else if (addr != nullptr) {
    std::free(addr);
  }
  if (fd >= 0) close(fd);
  if (kind == BlockKind::kDevice && !imported) g_used[device].fetch_sub(reserved);
}

std::mutex& memory_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

flagos_status_t alloc_device(const char* fn, int32_t device, uint64_t size, void** out,
                             bool shareable) {
  if (size == 0) {
    *out = nullptr;
    return FLAGOS_SUCCESS;
  }
  uint64_t cap = options().capacity_bytes;
  uint64_t bytes = size > cap ? size : round_up(size, shareable ? page_size() : alloc_alignment());
  uint64_t free_bytes = 0;
  if (!reserve(device, bytes, &free_bytes))
    return fail(FLAGOS_ERROR_OUT_OF_MEMORY,
                "%s: device %d out of memory: requested %llu bytes, %llu bytes free of %llu", fn,
                device, (unsigned long long)size, (unsigned long long)free_bytes,
                (unsigned long long)cap);
  auto b = std::make_shared<Block>();  // from here on ~Block un-reserves
  b->device = device;
  b->size = size;
  b->reserved = bytes;
  if (int err = map_device_memory(b.get(), shareable)) {
    // Nothing is mapped (addr is null), so ~Block only returns the reservation.
    return fail(FLAGOS_ERROR_OUT_OF_MEMORY, "%s: device %d cannot back %llu bytes: %s", fn,
                device, (unsigned long long)size, std::strerror(err));
  }
  insert(b);
  *out = b->addr;
  return FLAGOS_SUCCESS;
}

flagos_status_t free_device(const char* fn, int32_t device, void* ptr) {
  if (ptr == nullptr) return FLAGOS_SUCCESS;
  std::shared_ptr<Block> found = find_block(ptr);
  if (!found || found->kind != BlockKind::kDevice || found->addr != ptr)
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %p is not a live allocation from mem_alloc", fn,
                ptr);
  if (found->device != device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p belongs to device %d, not device %d", fn,
                ptr, found->device, device);
  if (found->imported)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: %p is another process's memory from open_memory; release it with close_memory",
                fn, ptr);
  found.reset();
  // A concurrent free of the same pointer may win the race; that one succeeds.
  if (!take(ptr, BlockKind::kDevice))
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %p was freed concurrently", fn, ptr);
  return FLAGOS_SUCCESS;
}

flagos_status_t import_device(const char* fn, int32_t device, int fd, uint64_t size, void** out) {
  auto b = std::make_shared<Block>();
  b->device = device;
  b->size = size;
  b->reserved = round_up(size, page_size());
  b->imported = true;  // from here on ~Block charges nothing back
  if (int err = map_file(b.get(), fd))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: cannot map %llu bytes of descriptor %d: %s", fn,
                (unsigned long long)size, fd, std::strerror(err));
  insert(b);
  *out = b->addr;
  return FLAGOS_SUCCESS;
}

flagos_status_t close_import(const char* fn, int32_t device, void* ptr) {
  std::shared_ptr<Block> found = find_block(ptr);
  if (!found || !found->imported || found->addr != ptr || found->device != device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is not memory open_memory mapped on device %d",
                fn, ptr, device);
  found.reset();
  // Pending tasks hold their own reference: the pages stay mapped until they finish.
  if (!take(ptr, BlockKind::kDevice))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p was closed concurrently", fn, ptr);
  return FLAGOS_SUCCESS;
}

flagos_status_t alloc_pinned(const char* fn, uint64_t size, void** out) {
  if (size == 0) {
    *out = nullptr;
    return FLAGOS_SUCCESS;
  }
  if (size > UINT64_MAX - page_size())
    return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: %llu bytes is more than can be mapped", fn,
                (unsigned long long)size);
  auto b = std::make_shared<Block>();
  b->kind = BlockKind::kPinnedHost;
  b->size = size;
  b->reserved = round_up(size, page_size());
  void* p = mmap(nullptr, b->reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    b->reserved = 0;
    return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: cannot map %llu bytes: %s", fn,
                (unsigned long long)size, std::strerror(err));
  }
  b->addr = b->access = static_cast<uint8_t*>(p);
  b->page_mapped = true;
  insert(b);
  *out = p;
  return FLAGOS_SUCCESS;
}

flagos_status_t free_pinned(const char* fn, void* ptr) {
  if (ptr == nullptr) return FLAGOS_SUCCESS;
  if (!take(ptr, BlockKind::kPinnedHost))
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %p is not a live allocation from host_alloc", fn,
                ptr);
  return FLAGOS_SUCCESS;
}

std::shared_ptr<Block> find_block(const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(memory_mutex());
  auto it = blocks().upper_bound(p);
  if (it == blocks().begin()) return nullptr;
  --it;
  if (p - it->first >= it->second->size) return nullptr;
  return it->second;
}

uint64_t used_bytes(int32_t device) { return g_used[device].load(); }

}  // namespace flagos_host
