// Device ordinals and properties, from the device table read once per
// process (device_table.h).
#pragma once

#include <cstdint>

#include "device_table.h"
#include "flagos/device.h"

namespace flagos_cudalike {

// Reads the table at the first call (probe, else the runtime in-process).
const DeviceTable& device_table();

int32_t device_count();
// SUCCESS, or INVALID_DEVICE with a message naming `fn` and the valid range.
flagos_status_t check_device(const char* fn, int32_t device);
// `device` must be valid.
const flagos_device_properties_t& properties(int32_t device);

// Into the device's priority range (numerically lower is higher priority).
int32_t clamp_priority(int32_t device, int32_t priority);
// 1 when `device` reaches `peer`'s memory directly (never for itself).
int32_t can_access_peer(int32_t device, int32_t peer);

}  // namespace flagos_cudalike
