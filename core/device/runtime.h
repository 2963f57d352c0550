// The torch glue's view of the runtime: the active plugin and per-device
// facts it needs on hot paths. Everything here is torch-free on purpose, so
// that the c10/ATen files include one small header.
#pragma once

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

// Device count of the active plugin; 0 when none is active. Never throws.
int32_t device_count() noexcept;

// Throws a torch-style "device index out of range" flagos::Error.
void check_index(int32_t device);

// Properties of `device`, read once and cached for the process.
const flagos_device_properties_t& properties(int32_t device);
bool has_capability(int32_t device, uint64_t cap);

// The calling thread's current device (plugin get_device / set_device).
int32_t current_device();
void set_current_device(int32_t device);

}  // namespace flagos::device
