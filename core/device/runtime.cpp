#include "runtime.h"

#include <array>
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
  auto plugin = plugin::active();
  return plugin ? plugin->device_count() : 0;
}

void check_index(int32_t device) {
  int32_t count = device_count();
  if (device < 0 || device >= count)
    throw Error("device index " + std::to_string(device) +
                " is out of range: the flagos device count is " + std::to_string(count));
}

const flagos_device_properties_t& properties(int32_t device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<flagos_device_properties_t>> cache;
  check_index(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.empty()) cache.resize(device_count());
  if (!cache[device]) {
    auto props = std::make_unique<flagos_device_properties_t>();
    props->struct_size = sizeof(flagos_device_properties_t);
    const auto& plugin = active_plugin();
    plugin.check(plugin.api().get_device_properties(device, props.get()), "get_device_properties");
    cache[device] = std::move(props);
  }
  return *cache[device];
}

bool has_capability(int32_t device, uint64_t cap) {
  return (properties(device).capabilities & cap) == cap;
}

int32_t current_device() {
  const auto& plugin = active_plugin();
  flagos_device_t device = 0;
  plugin.check(plugin.api().get_device(&device), "get_device");
  return device;
}

void set_current_device(int32_t device) {
  check_index(device);
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().set_device(device), "set_device");
}

}  // namespace flagos::device
