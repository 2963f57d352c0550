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

int32_t device_count() noexcept {
  // Stable for the process once a plugin is active (ABI: device_count), and
  // on every per-op path: read it once.
  static std::atomic<int32_t> cached{-1};
  int32_t n = cached.load(std::memory_order_relaxed);
  if (n >= 0) return n;
  auto plugin = plugin::active();
  if (!plugin) return 0;
  n = plugin->device_count();
  cached.store(n, std::memory_order_relaxed);
  return n;
}

void check_index(int32_t device) {
  int32_t count = device_count();
  if (device < 0 || device >= count)
    throw Error("device index " + std::to_string(device) +
                " is out of range: the flagos device count is " + std::to_string(count));
}

const flagos_device_properties_t& properties(int32_t device) {
  // Read on every routed call (capabilities, the CUDA ordinal): after a
  // device's first query its properties are one atomic load away. They are
  // kept for the process, like the plugin.
  check_index(device);
  static std::vector<std::atomic<const flagos_device_properties_t*>> cache(device_count());
  if (const auto* known = cache[device].load(std::memory_order_acquire)) return *known;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto* known = cache[device].load(std::memory_order_relaxed)) return *known;
  auto props = std::make_unique<flagos_device_properties_t>();
  props->struct_size = sizeof(flagos_device_properties_t);
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().get_device_properties(device, props.get()), "get_device_properties");
  cache[device].store(props.get(), std::memory_order_release);
  return *props.release();
}

bool has_capability(int32_t device, uint64_t cap) {
  return (properties(device).capabilities & cap) == cap;
}

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
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().set_device(device), "set_device");
  tls_current = device;
}

}  // namespace flagos::device
