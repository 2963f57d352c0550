// What a pointer is, as CUDA sees it: device memory (of which device),
// page-locked host memory, or ordinary pageable memory. Decides the
// host-buffer rule of memcpy_async and validates copy endpoints.
#pragma once

#include <cstdint>

#include "flagos/abi.h"

namespace flagos_cuda {

enum class Memory { kPageable, kPinned, kDevice };

struct Pointer {
  Memory memory = Memory::kPageable;
  int32_t device = -1;  // for kDevice
};

// Never dereferences `p`. Pointers CUDA does not know are pageable.
Pointer classify(const void* p);

// SUCCESS when `p` is device memory of `device`; otherwise INVALID_ARGUMENT
// naming `fn` and `what` ("dst", "src").
flagos_status_t expect_device(const char* fn, const char* what, const void* p, int32_t device);
// SUCCESS when `p` is host memory (pinned or pageable), with *pinned set.
flagos_status_t expect_host(const char* fn, const char* what, const void* p, bool* pinned);

}  // namespace flagos_cuda
