#include "device_table.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace flagos_cuda {
namespace {

constexpr const char* kHeader = "flagos-cuda-probe 1";

std::string describe(const char* call, cudaError_t err) {
  cudaGetLastError();
  return std::string(call) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
}

DeviceTable empty(std::string note) {
  DeviceTable t;
  t.note = std::move(note);
  return t;
}

// The members that follow from the others, set alike by enumerate and parse.
void derive(int32_t index, DeviceInfo* d) {
  flagos_device_properties_t& p = d->props;
  p.struct_size = sizeof p;
  std::snprintf(p.arch, sizeof p.arch, "sm_%d%d", p.capability_major, p.capability_minor);
  p.alloc_alignment = kAllocAlignment;
  p.interop_device_index = index;
  p.capabilities = FLAGOS_CAP_CUDA_ABI | FLAGOS_CAP_PINNED_HOST | FLAGOS_CAP_EVENT_TIMING;
  if (p.stream_priority_lowest != p.stream_priority_highest)
    p.capabilities |= FLAGOS_CAP_STREAM_PRIORITY;
  else
    p.stream_priority_lowest = p.stream_priority_highest = 0;  // the ABI's "no priorities"
  if (std::find(d->peer.begin(), d->peer.end(), 1) != d->peer.end())
    p.capabilities |= FLAGOS_CAP_PEER_ACCESS;
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

DeviceTable enumerate() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return empty(describe("cudaGetDeviceCount", err));
  if (count <= 0) return empty("cudaGetDeviceCount: no device");
  // The range is per architecture; the runtime reports it for the current device.
  int lowest = 0, highest = 0;
  err = cudaDeviceGetStreamPriorityRange(&lowest, &highest);
  if (err != cudaSuccess) return empty(describe("cudaDeviceGetStreamPriorityRange", err));
  DeviceTable t;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp cp;
    err = cudaGetDeviceProperties(&cp, i);
    if (err != cudaSuccess) return empty(describe("cudaGetDeviceProperties", err));
    DeviceInfo d;
    flagos_device_properties_t& p = d.props;
    std::snprintf(p.name, sizeof p.name, "%s", cp.name);
    std::memcpy(p.uuid, cp.uuid.bytes, sizeof p.uuid);
    p.pci_domain = cp.pciDomainID;
    p.pci_bus = cp.pciBusID;
    p.pci_device = cp.pciDeviceID;
    p.capability_major = cp.major;
    p.capability_minor = cp.minor;
    p.multiprocessor_count = cp.multiProcessorCount;
    p.total_memory = cp.totalGlobalMem;
    p.stream_priority_lowest = lowest;
    p.stream_priority_highest = highest;
    d.peer.assign(static_cast<size_t>(count), 0);
    for (int j = 0; j < count; ++j) {
      int can = 0;
      if (j == i) continue;
      err = cudaDeviceCanAccessPeer(&can, i, j);
      if (err != cudaSuccess) return empty(describe("cudaDeviceCanAccessPeer", err));
      d.peer[j] = can != 0;
    }
    derive(i, &d);
    t.devices.push_back(std::move(d));
  }
  return t;
}

std::string serialize(const DeviceTable& table) {
  std::ostringstream out;
  out << kHeader << "\n";
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
  if (!std::getline(in, line) || line != kHeader) return false;
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

}  // namespace flagos_cuda
