#include "devices.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "driver_state.h"
#include "errors.h"
#include "fork_guard.h"
#include "probe.h"

namespace flagos_cuda {
namespace {

using Props = flagos_device_properties_t;
// Where each member of the properties struct ends, in layout order.
constexpr size_t kMemberEnds[] = {
    FLAGOS_STRUCT_SIZE(Props, name),
    FLAGOS_STRUCT_SIZE(Props, arch),
    FLAGOS_STRUCT_SIZE(Props, uuid),
    FLAGOS_STRUCT_SIZE(Props, pci_domain),
    FLAGOS_STRUCT_SIZE(Props, pci_bus),
    FLAGOS_STRUCT_SIZE(Props, pci_device),
    FLAGOS_STRUCT_SIZE(Props, capability_major),
    FLAGOS_STRUCT_SIZE(Props, capability_minor),
    FLAGOS_STRUCT_SIZE(Props, multiprocessor_count),
    FLAGOS_STRUCT_SIZE(Props, total_memory),
    FLAGOS_STRUCT_SIZE(Props, alloc_alignment),
    FLAGOS_STRUCT_SIZE(Props, stream_priority_lowest),
    FLAGOS_STRUCT_SIZE(Props, stream_priority_highest),
    FLAGOS_STRUCT_SIZE(Props, capabilities),
    FLAGOS_STRUCT_SIZE(Props, interop_device_index),
    FLAGOS_STRUCT_SIZE(Props, reserved0),
};
static_assert(FLAGOS_STRUCT_SIZE(Props, reserved0) == sizeof(Props),
              "a member was appended to flagos_device_properties_t: add it to kMemberEnds");

DeviceTable in_process() {
  if (runtime_ready("device_count") != FLAGOS_SUCCESS) {
    DeviceTable none;
    none.note = last_error();
    return none;
  }
  return enumerate();
}

DeviceTable read_table() {
  // Already initialised by someone else: the probe would only cost time.
  if (driver_initialised_here()) return in_process();
  DeviceTable t;
  std::string why;
  switch (run_probe(&t, &why)) {
    case ProbeOutcome::kAnswered:
      return t;
    case ProbeOutcome::kUnavailable:
      return in_process();
    case ProbeOutcome::kBroken:
      break;
  }
  t = DeviceTable();
  t.note = why;
  return t;
}

}  // namespace

const DeviceTable& device_table() {
  static DeviceTable* table = nullptr;  // leaked: read after static destructors at exit
  static std::once_flag once;
  std::call_once(once, [] { table = new DeviceTable(read_table()); });
  return *table;
}

int32_t device_count() { return static_cast<int32_t>(device_table().devices.size()); }

flagos_status_t check_device(const char* fn, int32_t device) {
  int32_t n = device_count();
  if (device >= 0 && device < n) return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_INVALID_DEVICE, "%s: device %d out of range [0, %d)", fn, device, n);
}

const flagos_device_properties_t& properties(int32_t device) {
  return device_table().devices[device].props;
}

int32_t can_access_peer(int32_t device, int32_t peer) {
  return device != peer && device_table().devices[device].peer[peer] ? 1 : 0;
}

int32_t clamp_priority(int32_t device, int32_t priority) {
  const flagos_device_properties_t& p = properties(device);
  return std::min(std::max(priority, p.stream_priority_highest), p.stream_priority_lowest);
}

void fill_properties(int32_t device, flagos_device_properties_t* props) {
  // The caller's struct may be older (shorter) than ours: copy the members it
  // has whole room for. The layout only ever grows at the end, so that is
  // the prefix ending with the last member that fits.
  size_t end = sizeof props->struct_size;
  for (size_t member_end : kMemberEnds)
    if (member_end <= props->struct_size) end = member_end;
  const size_t skip = sizeof props->struct_size;
  std::memcpy(reinterpret_cast<char*>(props) + skip,
              reinterpret_cast<const char*>(&properties(device)) + skip, end - skip);
}

}  // namespace flagos_cuda
