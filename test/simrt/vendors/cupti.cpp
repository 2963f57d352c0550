// libcupti.so.13: CUPTI's activity API over the cuda runtime instance (or
// ppu's, whose SDK is a CUDA 13 toolkit: SIMRT_KEY), in CUDA 13's shapes.
#include "activity_exports.h"

#ifndef SIMRT_KEY
#define SIMRT_KEY "cuda"
#endif

namespace {
const simrt::activity::Profile kCupti = {SIMRT_KEY, "cupti", "CUPTI"};
}  // namespace

SIMRT_ACTIVITY_EXPORTS(cupti, kCupti)
