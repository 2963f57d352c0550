#include "devices.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "kit.h"
#include "options.h"

namespace flagos_host {
namespace {

thread_local int32_t t_current_device = 0;

}  // namespace

int32_t device_count() { return options().devices; }

flagos_status_t check_device(const char* fn, int32_t device) {
  return kit::check_device(fn, device, device_count());
}

int32_t current_device() { return t_current_device; }

void set_current_device(int32_t device) { t_current_device = device; }

uint64_t alloc_alignment() {
  return options().strict ? static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 64;
}

uint64_t capabilities() {
  uint64_t caps = FLAGOS_CAP_PINNED_HOST | FLAGOS_CAP_EVENT_TIMING | FLAGOS_CAP_PEER_ACCESS |
                  FLAGOS_CAP_STREAM_PRIORITY;
  // In strict mode the host must never touch device memory, so don't invite it.
  if (!options().strict) caps |= FLAGOS_CAP_HOST_ADDRESSABLE;
  return caps;
}

int32_t clamp_priority(int32_t priority) {
  return std::min(std::max(priority, kPriorityHighest), kPriorityLowest);
}

flagos_device_properties_t properties(int32_t device) {
  (void)device;  // all host devices are alike
  flagos_device_properties_t v;
  std::memset(&v, 0, sizeof v);
  std::snprintf(v.name, sizeof v.name, "%s", "flagos host device");
  struct utsname u;
  // "%.58s": "host-" plus the machine name always fits the 64-byte array.
  std::snprintf(v.arch, sizeof v.arch, "host-%.58s", uname(&u) == 0 ? u.machine : "unknown");
  v.pci_domain = v.pci_bus = v.pci_device = -1;
  v.multiprocessor_count = 1;  // one worker thread per stream
  v.total_memory = options().capacity_bytes;
  v.alloc_alignment = alloc_alignment();
  v.stream_priority_lowest = kPriorityLowest;
  v.stream_priority_highest = kPriorityHighest;
  v.capabilities = capabilities();
  v.interop_device_index = -1;
  return v;
}

}  // namespace flagos_host
