// runner.h — runs a group's checks, each guarded; by default in a forked
// child so that a crash or hang in the plugin becomes a failed check.
#pragma once

#include "framework.h"
#include "report.h"

namespace conformance {

struct RunConfig {
  bool fork = true;   // --no-fork runs everything in the runner's process
  int timeout_s = 120;  // per check, forked mode only
};

// `pristine` tracks, in --no-fork mode, whether this process has used a
// device yet; forked children always start pristine.
void run_group(const Group& g, PluginHandle& plugin, const RunConfig& cfg, bool* pristine,
               Report* report);

}  // namespace conformance
