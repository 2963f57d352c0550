#include "runtime.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "error.h"
#include "plugin/loader.h"

namespace flagos::device {

std::shared_ptr<const plugin::Plugin> active_plugin_shared() {
  auto plugin = plugin::active();
  if (!plugin)
    throw Error("no plugin is active: the flagos device is used before torch_fl.activate() "
                "(import torch_fl first)");
  return plugin;
}

const plugin::Plugin& active_plugin() {
  // The active plugin is never replaced or unloaded once set, so a raw
  // reference may be cached for the process.
  static const plugin::Plugin* cached = nullptr;
  if (cached) return *cached;
  cached = active_plugin_shared().get();
  return *cached;
}

namespace detail {

std::atomic<int32_t> device_count_cache{-1};
std::array<std::atomic<const flagos_device_properties_t*>, kMaxDevices> properties_cache{};

// Stable for the process once a plugin is active (ABI: device_count).
int32_t device_count_slow() noexcept {
  auto plugin = plugin::active();
  if (!plugin) return 0;
  const int32_t n = plugin->device_count();
  device_count_cache.store(n, std::memory_order_relaxed);
  return n;
}

void throw_bad_index(int32_t device) {
  throw Error("device index " + std::to_string(device) +
              " is out of range: the flagos device count is " + std::to_string(device_count()));
}

// A device's properties are asked of the plugin once and kept for the
// process, like the plugin.
const flagos_device_properties_t& properties_slow(int32_t device) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto* known = properties_cache[device].load(std::memory_order_relaxed)) return *known;
  auto props = std::make_unique<flagos_device_properties_t>();
  props->struct_size = sizeof(flagos_device_properties_t);
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().get_device_properties(device, props.get()), "get_device_properties");
  properties_cache[device].store(props.get(), std::memory_order_release);
  return *props.release();
}

}  // namespace detail

namespace {
// The plugin's per-thread current device, mirrored: only set_current_device
// changes it, and reading it is on every allocation's path.
thread_local int32_t tls_current = -1;
}  // namespace

int32_t current_device() {
  if (tls_current >= 0) return tls_current;
  const auto& plugin = active_plugin();
  flagos_device_t device = 0;
  plugin.check(plugin.api().get_device(&device), "get_device");
  tls_current = device;
  return device;
}

void set_current_device(int32_t device) {
  check_index(device);
  // Already current on this thread: nothing to ask of the plugin. Device
  // guards restore their device unconditionally (autograd's engine does it
  // once per backward node), and a CUDA plugin's set_device costs a
  // cudaGetDevice and a cudaSetDevice.
  if (device == tls_current) return;
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().set_device(device), "set_device");
  tls_current = device;
}

}  // namespace flagos::device
