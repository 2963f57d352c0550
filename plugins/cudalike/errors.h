// Vendor error codes to flagos statuses and last-error messages, and the
// gate every runtime call passes first (fork check, then lazy load).
#pragma once

#include "flagos/kit/guarded.hpp"
#include "flagos/kit/last_error.hpp"
#include "runtime.h"

namespace flagos_cudalike {

using flagos::kit::fail;
using flagos::kit::guarded;

// SUCCESS with the runtime loaded and marked in use in this process; or
// INVALID_STATE in a child forked after the parent used it; or
// RUNTIME_UNAVAILABLE naming what was searched.
flagos_status_t runtime_ready(const char* fn);

// The loaded runtime. Only after runtime_ready() succeeded.
const Runtime& rt();
// The runtime if runtime_ready() ever succeeded in this process, else nullptr.
const Runtime* loaded_runtime();

// The flagos status of a vendor error code (0 -> SUCCESS).
flagos_status_t status_of(int err);

// A runtime call that failed: clears the runtime's per-thread error (so a
// recoverable failure such as out-of-memory leaves the device usable),
// records "<fn>: <call> failed: <name> (<description>)" and returns the
// matching status. `call` is printf-style.
flagos_status_t rt_fail(const char* fn, int err, const char* call, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace flagos_cudalike
