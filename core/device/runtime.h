// The torch glue's view of the runtime: the active plugin and per-device
// facts it needs on hot paths. Everything here is torch-free on purpose, so
// that the c10/ATen files include one small header.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "flagos/flagos.h"
#include "plugin/loader.h"
#include "plugin/plugin.h"

namespace flagos::device {

// The active plugin. Throws flagos::Error ("no plugin is active") before
// torch_fl.activate() succeeded; never returns null.
const plugin::Plugin& active_plugin();
std::shared_ptr<const plugin::Plugin> active_plugin_shared();

// The per-op paths ask these on every call: their answers, once known, are
// one relaxed load away here, inline; the first asks go out of line.
namespace detail {
constexpr int32_t kMaxDevices = 128;  // c10::DeviceIndex is 8 bits: torch addresses no more
extern std::atomic<int32_t> device_count_cache;  // -1 until a plugin answered
extern std::array<std::atomic<const flagos_device_properties_t*>, kMaxDevices> properties_cache;
int32_t device_count_slow() noexcept;
[[noreturn]] void throw_bad_index(int32_t device);
const flagos_device_properties_t& properties_slow(int32_t device);
}  // namespace detail

// Device count of the active plugin; 0 when none is active. Never throws.
inline int32_t device_count() noexcept {
  const int32_t n = detail::device_count_cache.load(std::memory_order_relaxed);
  return n >= 0 ? n : detail::device_count_slow();
}

// Throws a torch-style "device index out of range" flagos::Error (also for
// an index torch cannot address, past kMaxDevices).
inline void check_index(int32_t device) {
  if (device < 0 || device >= device_count() || device >= detail::kMaxDevices) [[unlikely]]
    detail::throw_bad_index(device);
}

// Properties of `device`, read once and cached for the process.
inline const flagos_device_properties_t& properties(int32_t device) {
  check_index(device);
  if (const auto* known = detail::properties_cache[device].load(std::memory_order_acquire)) return *known;
  return detail::properties_slow(device);
}
inline bool has_capability(int32_t device, uint64_t cap) {
  return (properties(device).capabilities & cap) == cap;
}

// The calling thread's current device (plugin get_device / set_device).
int32_t current_device();
void set_current_device(int32_t device);

}  // namespace flagos::device
