// The error a device allocation throws when the plugin cannot supply memory
// even after the caching allocator returned its cache. The torch glue turns it
// into c10::OutOfMemoryError; the figures are kept as members so that it does
// not have to parse the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "error.h"

namespace flagos::memory {

// "512 bytes", "20.00 MiB", "1.50 GiB": for messages and memory summaries.
std::string format_bytes(uint64_t bytes);

// Free / total device memory as the plugin's optional mem_get_info reports it.
struct MemoryInfo {
  uint64_t free_bytes = 0, total_bytes = 0;
  bool known = false;  // false: the plugin has no mem_get_info, or it failed
};

class OutOfMemory : public flagos::Error {
 public:
  // what(): "[flagos] out of memory on <plugin> device <d>: tried to allocate
  // <X>; <free> free of <total> total, <reserved> reserved by torch_fl
  // (<allocated> allocated); <hint>". Never throws anything but bad_alloc.
  // `limit`: the allocator's per-process cap in bytes when one is set
  // (set_per_process_memory_fraction), else 0; the message then names it.
  OutOfMemory(const std::string& plugin_name, int device, size_t requested, MemoryInfo info,
              size_t reserved, size_t allocated, size_t limit = 0);

  size_t requested;    // bytes the caller asked for (before rounding)
  size_t free_bytes;   // device-wide, from mem_get_info (0 when unknown)
  size_t total_bytes;  // device-wide, from mem_get_info (0 when unknown)
  size_t reserved;     // held by this allocator (segments)
  size_t allocated;    // handed out by this allocator
  size_t limit;        // the per-process cap, 0 when none
  int device;
  bool memory_info_known;
};

}  // namespace flagos::memory
