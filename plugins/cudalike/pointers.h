// What a pointer is: device memory (of which device), page-locked host
// memory, else ordinary pageable memory. The plugin keeps its own table of
// the blocks it allocated (vendors' pointer-attribute structs differ in
// layout); on CUDA's own runtime, where the core may allocate through torch's
// CUDA allocator, the runtime is asked about pointers the table lacks.
// Decides the host-buffer rule of memcpy_async and validates copy endpoints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "flagos/abi.h"

namespace flagos_cudalike {

enum class Memory { kPageable, kPinned, kDevice };

struct Pointer {
  Memory memory = Memory::kPageable;
  int32_t device = -1;  // for kDevice
};

// Records a live block [base, base + size) (size > 0), and forgets it,
// returning its size (0: no block starts at base).
void note_block(const void* base, size_t size, Memory memory, int32_t device);
size_t forget_block(const void* base);
// The live block holding `p` in the plugin's table: its start and size;
// false when the table has none.
bool block_of(const void* p, const void** base, size_t* size);

// Never dereferences `p`; any address inside a live block classifies as it.
Pointer classify(const void* p);

// Bytes from `p` to the end of its block in the plugin's table; 0 when the
// table has no block holding `p` (e.g. memory of torch's CUDA allocator).
size_t block_room(const void* p);

// Guards the table; held across fork().
std::mutex& blocks_mutex();

// SUCCESS when `p` is device memory of `device`; otherwise INVALID_ARGUMENT
// naming `fn` and `what` ("dst", "src").
flagos_status_t expect_device(const char* fn, const char* what, const void* p, int32_t device);
// SUCCESS when `p` is host memory (pinned or pageable), with *pinned set.
flagos_status_t expect_host(const char* fn, const char* what, const void* p, bool* pinned);

}  // namespace flagos_cudalike
