// The services the core offers plugins (flagos_host_services_t, ABI 1.6):
// a table per loaded plugin, handed over at the handshake. Logging is served
// here; the stream-ordered workspace memory is lent by the device layer,
// which owns the per-device caching allocators (device_allocator.cpp).
#pragma once

#include <string>

#include "flagos/plugin_api.h"

namespace flagos::plugin {

// The device layer's workspace memory, as the services' C signatures. Each
// returns a status and, on failure, writes a one-line reason to *why.
struct WorkspaceMemory {
  flagos_status_t (*allocate)(flagos_device_t device, flagos_stream_t stream, uint64_t bytes, void** ptr,
                              std::string* why);
  flagos_status_t (*free)(void* ptr, std::string* why);
  flagos_status_t (*record_stream)(void* ptr, flagos_stream_t stream, std::string* why);
};

// Installs the memory behind every plugin's workspace services (once, at the
// core library's load, before any plugin loads). A table made while none is
// lent has no memory functions (NULL), as in a host without a device layer;
// one made before the memory is taken back answers FLAGOS_ERROR_UNSUPPORTED.
void lend_workspace_memory(const WorkspaceMemory* memory);

// While a plugin is only probed (loaded during the implicit selection to
// count its devices), its log lines are held: a plugin not selected has
// nothing to tell the user (say, that an option meant for the selected one is
// not its own). release_log says the held lines if `selected`, else only
// under FLAGOS_LOG=plugin. Thread-safe.
void hold_log(const std::string& plugin_name);
void release_log(const std::string& plugin_name, bool selected);

// The services table for the plugin named `plugin_name`: made on first use,
// kept for the process (plugins keep the pointer). Thread-safe.
const flagos_host_services_t* host_services(const std::string& plugin_name);

}  // namespace flagos::plugin
