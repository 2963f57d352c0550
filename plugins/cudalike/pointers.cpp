#include "pointers.h"

#include <cstdint>
#include <map>

#include "errors.h"

namespace flagos_cudalike {
namespace {

struct Block {
  size_t size;
  Memory memory;
  int32_t device;
};

// Keyed by base address; leaked so that frees at exit still find it.
std::map<uintptr_t, Block>& blocks() {
  static auto* m = new std::map<uintptr_t, Block>;
  return *m;
}

// The block holding address `at`, or nullptr; its base in *base. Caller
// holds blocks_mutex().
const Block* containing(uintptr_t at, uintptr_t* base) {
  auto& m = blocks();
  auto it = m.upper_bound(at);
  if (it == m.begin()) return nullptr;
  --it;
  if (at - it->first >= it->second.size) return nullptr;
  *base = it->first;
  return &it->second;
}

}  // namespace

std::mutex& blocks_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

void note_block(const void* base, size_t size, Memory memory, int32_t device) {
  std::lock_guard<std::mutex> lock(blocks_mutex());
  blocks()[reinterpret_cast<uintptr_t>(base)] = Block{size, memory, device};
}

size_t forget_block(const void* base) {
  std::lock_guard<std::mutex> lock(blocks_mutex());
  auto it = blocks().find(reinterpret_cast<uintptr_t>(base));
  if (it == blocks().end()) return 0;
  const size_t size = it->second.size;
  blocks().erase(it);
  return size;
}

bool block_of(const void* p, const void** base, size_t* size) {
  std::lock_guard<std::mutex> lock(blocks_mutex());
  uintptr_t start = 0;
  const Block* b = containing(reinterpret_cast<uintptr_t>(p), &start);
  if (b == nullptr) return false;
  *base = reinterpret_cast<const void*>(start);
  *size = b->size;
  return true;
}

namespace {

// cudaPointerAttributes: its first four members are as laid out since CUDA
// 11; later runtimes append (CUDA 13 adds `long reserved[8]`) and write the
// whole struct they know, so the buffer leaves room for much more. Read
// only through Vendor::pointer_attributes, i.e. for CUDA's own runtime.
struct CudaPointerAttributes {
  int type;  // cudaMemoryType: 0 unregistered, 1 host, 2 device, 3 managed
  int device;
  void* device_pointer;
  void* host_pointer;
  long room[64];  // reserved members of this and later runtimes
};

bool in_table(uintptr_t at, Pointer* out) {
  std::lock_guard<std::mutex> lock(blocks_mutex());
  uintptr_t start = 0;
  const Block* b = containing(at, &start);
  if (b == nullptr) return false;
  out->memory = b->memory;
  out->device = b->memory == Memory::kDevice ? b->device : -1;
  return true;
}

// What the runtime says, where it can say it and is already in use here
// (asking would otherwise initialise it just to classify a pointer).
bool from_runtime(const void* p, Pointer* out) {
  const Runtime* r = loaded_runtime();
  if (r == nullptr || r->pointer_attributes == nullptr) return false;
  CudaPointerAttributes a{};
  if (r->pointer_attributes(&a, p) != 0) {
    r->get_last_error();  // older runtimes fail for unregistered host memory
    return false;
  }
  if (a.type == 2 || a.type == 3) {
    out->memory = Memory::kDevice;
    out->device = a.device;
  } else if (a.type == 1) {
    out->memory = Memory::kPinned;
  }
  return true;
}

}  // namespace

size_t block_room(const void* p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(blocks_mutex());
  uintptr_t start = 0;
  const Block* b = containing(at, &start);
  return b == nullptr ? 0 : b->size - (at - start);
}

Pointer classify(const void* p) {
  Pointer out;
  if (p == nullptr || in_table(reinterpret_cast<uintptr_t>(p), &out)) return out;
  from_runtime(p, &out);
  return out;
}

flagos_status_t expect_device(const char* fn, const char* what, const void* p, int32_t device) {
  Pointer ptr = classify(p);
  if (ptr.memory != Memory::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is not device memory", fn, what, p);
  if (ptr.device != device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is memory of device %d, not of device %d",
                fn, what, p, ptr.device, device);
  return FLAGOS_SUCCESS;
}

flagos_status_t expect_host(const char* fn, const char* what, const void* p, bool* pinned) {
  Pointer ptr = classify(p);
  if (ptr.memory == Memory::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is device memory (of device %d), not host memory",
                fn, what, p, ptr.device);
  *pinned = ptr.memory == Memory::kPinned;
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_cudalike
