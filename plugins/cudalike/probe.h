// Reads the device table from the helper executable flagos-<vendor>-probe,
// installed beside this library. Asking the runtime directly would
// initialise it in this process, and a process that initialised a CUDA-shaped
// runtime cannot fork children that use it: `import torch_fl` (which counts
// devices) followed by a forking DataLoader or multiprocessing pool would
// then break.
#pragma once

#include <string>

#include "device_table.h"

namespace flagos_cudalike {

enum class ProbeOutcome {
  kAnswered,     // *out holds the table
  kUnavailable,  // no probe, or it could not run: ask the runtime in-process
  kBroken,       // it ran and crashed or hung: the driver is unusable, report no device
};

// Runs the probe once per call, on the runtime library at `runtime_path`
// (the one this process resolved); `why` explains any outcome but kAnswered.
ProbeOutcome run_probe(const std::string& runtime_path, DeviceTable* out, std::string* why);

}  // namespace flagos_cudalike
