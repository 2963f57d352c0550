// libmupti.so: MUSA's rename of CUPTI's activity API (mupti*, MUPTI_*) over
// the musa runtime instance. Numbers and layouts: CUPTI's, assumed unchanged.
#include "activity_exports.h"

namespace {
const simrt::activity::Profile kMupti = {"musa", "mupti", "MUPTI"};
}  // namespace

SIMRT_ACTIVITY_EXPORTS(mupti, kMupti)
