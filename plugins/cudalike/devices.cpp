#include "devices.h"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>

#include "driver_state.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "flagos/kit/fork_guard.hpp"
#include "probe.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

DeviceTable in_process() {
  DeviceTable none;
  if (runtime_ready("device_count") != FLAGOS_SUCCESS) {
    none.note = flagos::kit::last_error();
    return none;
  }
  return enumerate(rt());
}

// The file the runtime was opened from, for the probe to open the same one.
// An adapter's get_device_count is a translating function of this plugin's
// own: then the library's path as opened names it.
std::string runtime_file(const Runtime& r) {
  Dl_info info{}, self{};
  if (dladdr(reinterpret_cast<void*>(r.get_device_count), &info) != 0 && info.dli_fname != nullptr &&
      (dladdr(reinterpret_cast<void*>(&runtime_file), &self) == 0 || info.dli_fbase != self.dli_fbase))
    return info.dli_fname;
  return r.path;
}

DeviceTable query(const Runtime& r) {
  // Already initialised by someone else (a vendor torch): the probe would only cost time.
  if (driver_initialised_here()) return in_process();
  DeviceTable t;
  std::string why;
  switch (run_probe(runtime_file(r), &t, &why)) {
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

DeviceTable read_table() {
  // Opening the library initialises nothing; without one there is no device.
  std::string why;
  const Runtime* r = try_load(&why);
  if (r == nullptr) return DeviceTable{{}, why};
  DeviceTable t = query(*r);
  // With devices, the note says which copy of the runtime they come from:
  // a vendor torch and the plugin must share one, and this shows whether they do.
  if (t.note.empty()) t.note = "runtime " + runtime_file(*r) + " (" + r->found_by + ")";
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
  return flagos::kit::check_device(fn, device, device_count());
}

const flagos_device_properties_t& properties(int32_t device) {
  return device_table().devices[device].props;
}

int32_t clamp_priority(int32_t device, int32_t priority) {
  const flagos_device_properties_t& p = properties(device);
  // Lowest priority is the numerically largest value.
  return std::min(std::max(priority, p.stream_priority_highest), p.stream_priority_lowest);
}

int32_t can_access_peer(int32_t device, int32_t peer) {
  const DeviceInfo& d = device_table().devices[device];
  return peer >= 0 && static_cast<size_t>(peer) < d.peer.size() ? d.peer[peer] : 0;
}

}  // namespace flagos_cudalike
