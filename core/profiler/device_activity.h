// Device rows in torch.profiler: the kineto child profiler over the plugin's
// profiler extension (docs/profiler.md).
#pragma once

#include <atomic>
#include <cstddef>

#include <c10/core/Device.h>

namespace flagos::profiler {

namespace detail {
extern std::atomic<bool> recording;
}  // namespace detail

// True while a profile that asks for PrivateUse1 activity runs: one relaxed
// load, so that the allocator pays nothing more when no profile runs.
inline bool recording() { return detail::recording.load(std::memory_order_relaxed); }

// Reports an allocation (bytes > 0) or free (bytes < 0) of flagos memory to
// torch's profiler (profile_memory=True), with the device's totals after it.
void report_memory(void* ptr, int64_t bytes, size_t allocated, size_t reserved,
                   c10::Device device);

// Registers the flagos device profiler with kineto. Runs once when
// libtorch_fl_core loads; kineto creates the profiler at its own first
// profile, and a session only for profiles that ask for PrivateUse1 activity.
void register_with_kineto();

}  // namespace flagos::profiler
