// The device list: everything device_count, get_device_properties and
// device_can_access_peer report, read once and fixed for the process.
// flagos ordinal i is the runtime's ordinal i (after the vendor's
// *_VISIBLE_DEVICES). It is gathered by enumerate(), normally in the helper
// process flagos-<vendor>-probe, which sends it back as text (serialize/parse).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flagos/device.h"
#include "runtime.h"

namespace flagos_cudalike {

struct DeviceInfo {
  flagos_device_properties_t props{};  // complete, struct_size = sizeof
  std::vector<uint8_t> peer;           // peer[j] == 1: reaches device j's memory directly
};

// The minimum alignment of the runtime's device allocations (CUDA's documented 256).
constexpr uint64_t kAllocAlignment = 256;

struct DeviceTable {
  std::vector<DeviceInfo> devices;
  std::string note;  // why the list is empty, for people reading the probe's output
};

// Queries `rt` in this process, through scalar getters only (vendor property
// structs change layout between versions). No device, no driver or any
// failure gives an empty table with a note: absence is not an error.
DeviceTable enumerate(const Runtime& rt);

// One line per device; parse(serialize(t)) reproduces t.
std::string serialize(const DeviceTable& table);
// False when `text` is not a complete probe answer.
bool parse(const std::string& text, DeviceTable* out);

}  // namespace flagos_cudalike
