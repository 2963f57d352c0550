// Copies: resolving the caller's pointers against live blocks (validation and
// strict-mode translation), and enqueuing the copy with the ABI's host
// buffer rule (pageable memory is finished with when the call returns).
#pragma once

#include <cstdint>
#include <memory>

#include "memory.h"
#include "stream.h"

namespace flagos_host {

// One side of a copy, resolved when the call is made.
struct Endpoint {
  std::shared_ptr<Block> block;  // keeps the memory alive; null: pageable host memory
  uint8_t* addr = nullptr;       // where the plugin reads or writes

  bool pageable() const { return !block; }
};

// Any device (device < 0) or that device: [ptr, ptr + size) must lie inside
// one live mem_alloc block. `what` names the argument in messages.
flagos_status_t resolve_device(const char* fn, const char* what, const void* ptr, uint64_t size,
                               int32_t device, Endpoint* out);
// Host memory: non-NULL, not device memory; pinned when inside a host_alloc block.
flagos_status_t resolve_host(const char* fn, const char* what, const void* ptr, uint64_t size,
                             Endpoint* out);
// Both sides of a copy in direction `kind` (validated). `device` as above.
flagos_status_t resolve_copy(const char* fn, void* dst, const void* src, uint64_t size,
                             int32_t kind, int32_t device, Endpoint* d, Endpoint* s);

// Enqueues dst <- src on `stream`. Returns once pageable host memory is no
// longer needed; with `wait`, once the copy completed.
flagos_status_t enqueue_copy(const char* fn, Stream& stream, const Endpoint& dst,
                             const Endpoint& src, uint64_t size, bool wait);

}  // namespace flagos_host
