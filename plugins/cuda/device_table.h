// The device list: everything device_count, get_device_properties and
// device_can_access_peer report, read once and fixed for the process.
// flagos ordinal i is CUDA ordinal i (after CUDA_VISIBLE_DEVICES).
// It is gathered by enumerate() with the CUDA runtime, normally in the helper
// process flagos-cuda-probe, which sends it back as text (serialize/parse).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flagos/device.h"

namespace flagos_cuda {

struct DeviceInfo {
  flagos_device_properties_t props{};  // complete, struct_size = sizeof
  std::vector<uint8_t> peer;           // peer[j] == 1: reaches device j's memory directly
};

// cudaMalloc's documented minimum alignment.
constexpr uint64_t kAllocAlignment = 256;

struct DeviceTable {
  std::vector<DeviceInfo> devices;
  std::string note;  // why the list is empty, for people reading the probe's output
};

// Queries the CUDA runtime of this process. No device, no driver or any
// failure gives an empty table with a note: absence is not an error.
DeviceTable enumerate();

// One line per device; parse(serialize(t)) reproduces t.
std::string serialize(const DeviceTable& table);
// False when `text` is not a complete probe answer.
bool parse(const std::string& text, DeviceTable* out);

}  // namespace flagos_cuda
