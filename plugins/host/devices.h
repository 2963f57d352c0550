// Device ordinals, the per-thread current device and device properties.
#pragma once

#include <cstdint>

#include "flagos/device.h"

namespace flagos_host {

// CUDA convention: numerically lower is higher priority.
constexpr int32_t kPriorityLowest = 0;
constexpr int32_t kPriorityHighest = -1;

int32_t device_count();
// SUCCESS, or INVALID_DEVICE with a message naming `fn` and the range.
flagos_status_t check_device(const char* fn, int32_t device);

int32_t current_device();
void set_current_device(int32_t device);

// mem_alloc alignment: 64 bytes, or the page size in strict mode.
uint64_t alloc_alignment();
uint64_t capabilities();
int32_t clamp_priority(int32_t priority);

// Every member, for kit::write_properties to copy what fits the caller's struct.
flagos_device_properties_t properties(int32_t device);

}  // namespace flagos_host
