// Status codes and the calling thread's last-error message; CUDA errors are
// translated here, and no C++ exception is allowed past an entry point.
#pragma once

#include <cuda_runtime_api.h>

#include "flagos/abi.h"

namespace flagos_cuda {

// Stores a printf-style message as the calling thread's last error and
// returns `status`. Never throws.
flagos_status_t fail(flagos_status_t status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// SUCCESS, or INVALID_ARGUMENT "<fn>: <name> is NULL" for a NULL out-pointer.
flagos_status_t need(const char* fn, const void* out, const char* name);

// "" until the calling thread's first failure.
const char* last_error();

// A CUDA call that failed: clears CUDA's per-thread error (so a recoverable
// failure such as out-of-memory leaves the device usable), records
// "<fn>: <call> failed: <cudaErrorName> (<description>)" and returns the
// matching flagos status. `call` is printf-style (e.g. "cudaMalloc(%llu bytes)").
flagos_status_t cuda_fail(const char* fn, cudaError_t err, const char* call, ...)
    __attribute__((format(printf, 3, 4)));

// The flagos status for a CUDA error code (cudaSuccess -> FLAGOS_SUCCESS).
flagos_status_t status_of(cudaError_t err);

// The status for the exception being handled (call only inside a catch).
flagos_status_t exception_status(const char* fn) noexcept;

// Runs an entry point's body; an escaping exception becomes a status.
template <class Body>
flagos_status_t guarded(const char* fn, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return exception_status(fn);
  }
}

}  // namespace flagos_cuda
