// Reads the device table from the helper executable flagos-cuda-probe,
// installed beside this library. Asking the CUDA runtime directly would
// initialise it in this process, and a process that initialised CUDA cannot
// fork children that use CUDA: `import torch_fl` (which counts devices)
// followed by a forking DataLoader or multiprocessing pool would then break.
#pragma once

#include <string>

#include "device_table.h"

namespace flagos_cuda {

enum class ProbeOutcome {
  kAnswered,     // *out holds the table
  kUnavailable,  // no probe, or it could not run: ask the runtime in-process
  kBroken,       // it ran and crashed or hung: the driver is unusable, report no device
};

// Runs the probe once per call; `why` explains any outcome but kAnswered.
ProbeOutcome run_probe(DeviceTable* out, std::string* why);

}  // namespace flagos_cuda
