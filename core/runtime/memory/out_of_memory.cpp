#include "memory/out_of_memory.h"

#include <cstdio>

namespace flagos::memory {
namespace {

std::string describe(const std::string& plugin_name, int device, size_t requested,
                     const MemoryInfo& info, size_t reserved, size_t allocated, size_t limit) {
  std::string text = "out of memory on " + plugin_name + " device " + std::to_string(device) +
                     ": tried to allocate " + format_bytes(requested) + "; ";
  if (info.known)
    text += format_bytes(info.free_bytes) + " free of " + format_bytes(info.total_bytes) +
            " total, ";
  else
    text += "free and total memory unknown (the plugin has no mem_get_info), ";
  text += format_bytes(reserved) + " reserved by torch_fl (" + format_bytes(allocated) +
          " allocated); ";
  if (limit > 0)
    text += "this process may reserve " + format_bytes(limit) +
            " (torch.flagos.set_per_process_memory_fraction); ";
  // The cache was already returned before this throw, so what stays reserved
  // but unallocated is held by split segments: fragmentation.
  const size_t idle = reserved > allocated ? reserved - allocated : 0;
  if (idle > 0 && (idle >= requested || idle * 4 >= reserved))
    text += format_bytes(idle) +
            " is reserved but unallocated (fragmentation): try torch.flagos.empty_cache(), or "
            "FLAGOS_USE_CACHING_ALLOCATOR=0 to allocate without the cache";
  else
    text += "free tensors that are no longer needed or reduce the batch size";
  return text;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f %s", value, units[unit]);
  return buffer;
}

OutOfMemory::OutOfMemory(const std::string& plugin_name, int device_index, size_t requested_bytes,
                         MemoryInfo info, size_t reserved_bytes, size_t allocated_bytes, size_t limit_bytes)
    : Error(describe(plugin_name, device_index, requested_bytes, info, reserved_bytes,
                     allocated_bytes, limit_bytes)),
      requested(requested_bytes),
      free_bytes(info.known ? info.free_bytes : 0),
      total_bytes(info.known ? info.total_bytes : 0),
      reserved(reserved_bytes),
      allocated(allocated_bytes),
      limit(limit_bytes),
      device(device_index),
      memory_info_known(info.known) {}

}  // namespace flagos::memory
