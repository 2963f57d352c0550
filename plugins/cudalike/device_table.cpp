#include "device_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "vendor.h"

namespace flagos_cudalike {
namespace {

std::string header() { return std::string("flagos-") + vendor().name + "-probe 1"; }

std::string describe(const Runtime& rt, const char* call, int err) {
  rt.get_last_error();
  const char* name = rt.get_error_name ? rt.get_error_name(err) : nullptr;
  return std::string(vendor().prefix) + call + ": " + (name ? name : "error") + " " + std::to_string(err);
}

DeviceTable empty(std::string note) {
  DeviceTable t;
  t.note = std::move(note);
  return t;
}

// The members that follow from the others, set alike by enumerate and parse.
void derive(int32_t index, DeviceInfo* d) {
  const Vendor& v = vendor();
  flagos_device_properties_t& p = d->props;
  p.struct_size = sizeof p;
  std::snprintf(p.arch, sizeof p.arch, v.arch_format, p.capability_major, p.capability_minor);
  p.alloc_alignment = kAllocAlignment;
  p.interop_device_index = v.cuda_abi ? index : -1;
  p.capabilities = FLAGOS_CAP_EVENT_TIMING;
  if (v.pinned_host) p.capabilities |= FLAGOS_CAP_PINNED_HOST;
  if (v.cuda_abi) p.capabilities |= FLAGOS_CAP_CUDA_ABI;
  if (p.stream_priority_lowest != p.stream_priority_highest)
    p.capabilities |= FLAGOS_CAP_STREAM_PRIORITY;
  else
    p.stream_priority_lowest = p.stream_priority_highest = 0;  // the ABI's "no priorities"
  if (std::find(d->peer.begin(), d->peer.end(), 1) != d->peer.end())
    p.capabilities |= FLAGOS_CAP_PEER_ACCESS;
}

// An attribute the vendor numbers (id >= 0) and the runtime answers; else 0.
int attribute(const Runtime& rt, int id, int device) {
  int value = 0;
  if (id < 0 || rt.device_get_attribute == nullptr) return 0;
  if (rt.device_get_attribute(&value, id, device) != 0) {
    rt.get_last_error();
    return 0;
  }
  return value;
}

// Name and total memory from whichever getter the vendor has: the
// runtime's, the driver's, else a generic name and the free/total query
// (which makes the device current: the probe's process is disposable).
bool name_and_memory(const Runtime& rt, int device, DeviceInfo* d, std::string* why) {
  flagos_device_properties_t& p = d->props;
  int handle = device;
  if (rt.drv_device_get != nullptr && rt.drv_device_get(&handle, device) != 0) handle = device;
  if (rt.device_name == nullptr || rt.device_name(p.name, sizeof p.name, device) != 0) {
    if (rt.drv_device_get_name == nullptr || rt.drv_device_get_name(p.name, sizeof p.name, handle) != 0)
      std::snprintf(p.name, sizeof p.name, "%s device %d", vendor().display, device);
  }
  p.name[sizeof p.name - 1] = '\0';
  if (p.name[0] == '\0') std::snprintf(p.name, sizeof p.name, "%s device %d", vendor().display, device);
  if (rt.drv_device_get_uuid != nullptr && rt.drv_device_get_uuid(p.uuid, handle) != 0)
    std::memset(p.uuid, 0, sizeof p.uuid);
  size_t total = 0;
  if (rt.device_total != nullptr && rt.device_total(&total, device) == 0) {
  } else if (rt.drv_device_total != nullptr && rt.drv_device_total(&total, handle) == 0) {
  } else {
    size_t free_now = 0;
    int err = rt.set_device(device);
    if (err == 0) err = rt.mem_get_info(&free_now, &total);
    if (err != 0) {
      *why = describe(rt, "MemGetInfo", err);
      return false;
    }
  }
  p.total_memory = total;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool parse_device(const std::string& line, size_t index, size_t count, DeviceInfo* d) {
  flagos_device_properties_t& p = d->props;
  unsigned long long total = 0;
  char uuid[33] = {}, peer[1025] = {};
  int at = -1, name_at = -1;
  int n = std::sscanf(line.c_str(), "device %d %d %d %d %llu %d %d %d %d %d %32s %1024s %n", &at,
                      &p.capability_major, &p.capability_minor, &p.multiprocessor_count, &total,
                      &p.pci_domain, &p.pci_bus, &p.pci_device, &p.stream_priority_lowest,
                      &p.stream_priority_highest, uuid, peer, &name_at);
  if (n != 12 || at != static_cast<int>(index) || name_at < 0) return false;
  if (std::strlen(uuid) != 32 || std::strlen(peer) != count) return false;
  p.total_memory = total;
  for (int i = 0; i < 16; ++i) {
    int hi = hex_value(uuid[2 * i]), lo = hex_value(uuid[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    p.uuid[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  d->peer.resize(count);
  for (size_t j = 0; j < count; ++j) {
    if (peer[j] != '0' && peer[j] != '1') return false;
    d->peer[j] = peer[j] == '1';
  }
  std::string name = line.substr(static_cast<size_t>(name_at));
  if (name.empty() || name.size() >= sizeof p.name) return false;
  std::memcpy(p.name, name.c_str(), name.size() + 1);
  derive(static_cast<int32_t>(index), d);
  return true;
}

}  // namespace

DeviceTable enumerate(const Runtime& rt) {
  const Vendor& v = vendor();
  int count = 0;
  int err = rt.get_device_count(&count);
  if (err != 0) return empty(describe(rt, "GetDeviceCount", err));
  if (count <= 0)
    return empty((v.count_call != nullptr ? std::string(v.count_call) : std::string(v.prefix) + "GetDeviceCount") +
                 ": no device");
  // The range is per architecture; the runtime reports it for the current device.
  int lowest = 0, highest = 0;
  if (rt.device_get_stream_priority_range != nullptr &&
      (err = rt.device_get_stream_priority_range(&lowest, &highest)) != 0)
    return empty(describe(rt, "DeviceGetStreamPriorityRange", err));
  DeviceTable t;
  for (int i = 0; i < count; ++i) {
    DeviceInfo d;
    std::string why;
    if (!name_and_memory(rt, i, &d, &why)) return empty(why);
    flagos_device_properties_t& p = d.props;
    p.capability_major = attribute(rt, v.attr_major, i);
    p.capability_minor = attribute(rt, v.attr_minor, i);
    // A runtime with no such attribute (tsingmicro) reports one: torch code
    // expects a positive count.
    p.multiprocessor_count = std::max(1, attribute(rt, v.attr_multiprocessors, i));
    p.pci_domain = v.attr_pci_domain >= 0 ? attribute(rt, v.attr_pci_domain, i) : -1;
    p.pci_bus = attribute(rt, v.attr_pci_bus, i);
    p.pci_device = attribute(rt, v.attr_pci_device, i);
    p.stream_priority_lowest = lowest;
    p.stream_priority_highest = highest;
    d.peer.assign(static_cast<size_t>(count), 0);
    for (int j = 0; j < count && rt.device_can_access_peer != nullptr; ++j) {
      int can = 0;
      if (j == i) continue;
      if ((err = rt.device_can_access_peer(&can, i, j)) != 0)
        return empty(describe(rt, "DeviceCanAccessPeer", err));
      d.peer[j] = can != 0;
    }
    derive(i, &d);
    t.devices.push_back(std::move(d));
  }
  return t;
}

std::string serialize(const DeviceTable& table) {
  std::ostringstream out;
  out << header() << "\n";
  if (!table.note.empty()) out << "# " << table.note << "\n";
  out << "devices " << table.devices.size() << "\n";
  for (size_t i = 0; i < table.devices.size(); ++i) {
    const flagos_device_properties_t& p = table.devices[i].props;
    char uuid[33];
    for (int k = 0; k < 16; ++k) std::snprintf(uuid + 2 * k, 3, "%02x", p.uuid[k]);
    std::string peer;
    for (uint8_t reach : table.devices[i].peer) peer += reach ? '1' : '0';
    out << "device " << i << ' ' << p.capability_major << ' ' << p.capability_minor << ' '
        << p.multiprocessor_count << ' ' << p.total_memory << ' ' << p.pci_domain << ' '
        << p.pci_bus << ' ' << p.pci_device << ' ' << p.stream_priority_lowest << ' '
        << p.stream_priority_highest << ' ' << uuid << ' ' << peer << ' ' << p.name << "\n";
  }
  out << "end\n";
  return out.str();
}

bool parse(const std::string& text, DeviceTable* out) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != header()) return false;
  DeviceTable t;
  long long count = -1;
  bool ended = false;
  while (!ended && std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) {
      t.note = line.substr(2);
    } else if (line.rfind("devices ", 0) == 0) {
      if (std::sscanf(line.c_str(), "devices %lld", &count) != 1 || count < 0 || count > 1024)
        return false;
    } else if (line.rfind("device ", 0) == 0) {
      DeviceInfo d;
      if (count < 0 || !parse_device(line, t.devices.size(), static_cast<size_t>(count), &d))
        return false;
      t.devices.push_back(std::move(d));
    } else {
      ended = line == "end";
      if (!ended) return false;
    }
  }
  if (!ended || count < 0 || t.devices.size() != static_cast<size_t>(count)) return false;
  *out = std::move(t);
  return true;
}

}  // namespace flagos_cudalike
