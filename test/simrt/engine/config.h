// The SIMRT_* environment knobs, read once per process: a sim must not change
// shape under a running test because someone set a variable later.
#pragma once

#include <cstddef>
#include <string>

namespace simrt {

struct Config {
  int devices = 2;                    // SIMRT_DEVICES
  size_t memory_bytes = 2048ull << 20;  // SIMRT_MEMORY_MB, a per-device cap
  unsigned delay_us = 0;              // SIMRT_DELAY_US, sleep before each stream op
  bool guard = false;                 // SIMRT_GUARD=1, PROT_NONE device pointers
  std::string name;                   // SIMRT_NAME, "" = "Simulated <Vendor> Device"
  std::string fail;                   // SIMRT_FAIL, parsed by faults.cpp
};

const Config& config();

}  // namespace simrt
