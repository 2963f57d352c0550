// Plugin options from the handshake (FLAGOS_PLUGIN_OPTIONS or a test harness).
#pragma once

#include <cstdint>

#include "flagos/plugin_api.h"

namespace flagos_host {

// Devices are kept in fixed static arrays, so the count has a ceiling.
constexpr int32_t kMaxDevices = 256;

struct Options {
  int32_t devices = 2;           // "devices": how many devices to expose (0 allowed)
  bool strict = false;           // "strict": device memory PROT_NONE to the host
  uint64_t capacity_bytes = 0;   // "memory_mb": per-device capacity
  bool collectives = true;       // "collectives": chain FLAGOS_EXTENSION_COLLECTIVES
  bool graphs = true;            // "graphs": chain FLAGOS_EXTENSION_GRAPHS
  bool profiler = true;          // "profiler": chain FLAGOS_EXTENSION_PROFILER
  bool ipc = true;               // "ipc": chain FLAGOS_EXTENSION_IPC

  bool operator==(const Options& o) const {
    return devices == o.devices && strict == o.strict && capacity_bytes == o.capacity_bytes &&
           collectives == o.collectives && graphs == o.graphs && profiler == o.profiler &&
           ipc == o.ipc;
  }
};

// Options with every key at its default (capacity: half the physical RAM).
Options default_options();

// Reads the options of `host` (unknown keys ignored; the last of a repeated
// key wins). On a bad value sets the last error (naming `fn` and the option)
// and returns INVALID_ARGUMENT.
flagos_status_t parse_options(const char* fn, const flagos_host_info_t* host, Options* out);

// One warning through the core's log per option key parse_options does not
// read (kit/options.hpp). Called once, when the options are fixed.
void warn_unknown_options(const flagos_host_info_t* host);

// The options in force: fixed by the first successful entry call.
const Options& options();
void set_options(const Options& opts);

}  // namespace flagos_host
