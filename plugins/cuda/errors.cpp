#include "errors.h"

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>

#include "fork_guard.h"

namespace flagos_cuda {
namespace {

// A fixed buffer per thread: recording an error never allocates, so it works
// when the failure itself is running out of memory.
thread_local char t_message[1024];

}  // namespace

flagos_status_t fail(flagos_status_t status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(t_message, sizeof t_message, fmt, args);
  va_end(args);
  return status;
}

const char* last_error() { return t_message; }

flagos_status_t need(const char* fn, const void* out, const char* name) {
  return out != nullptr ? FLAGOS_SUCCESS
                        : fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
}

flagos_status_t status_of(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
      return FLAGOS_SUCCESS;
    case cudaErrorNotReady:
      return FLAGOS_NOT_READY;
    case cudaErrorMemoryAllocation:
      return FLAGOS_ERROR_OUT_OF_MEMORY;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
      return FLAGOS_ERROR_INVALID_ARGUMENT;
    case cudaErrorInvalidDevice:
      return FLAGOS_ERROR_INVALID_DEVICE;
    case cudaErrorInvalidResourceHandle:
    case cudaErrorContextIsDestroyed:
      return FLAGOS_ERROR_INVALID_HANDLE;
    case cudaErrorNotSupported:
      return FLAGOS_ERROR_UNSUPPORTED;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemNotReady:
    case cudaErrorStubLibrary:
      return FLAGOS_ERROR_RUNTIME_UNAVAILABLE;
    case cudaErrorNotPermitted:
    case cudaErrorIllegalState:
      return FLAGOS_ERROR_INVALID_STATE;
    // Sticky errors: the context is corrupt and every later call fails.
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorAssert:
      return FLAGOS_ERROR_DEVICE_LOST;
    default:
      return FLAGOS_ERROR_DEVICE;
  }
}

flagos_status_t cuda_fail(const char* fn, cudaError_t err, const char* call, ...) {
  cudaGetLastError();  // reset the non-sticky per-thread error; sticky ones stay
  char what[256];
  va_list args;
  va_start(args, call);
  std::vsnprintf(what, sizeof what, call, args);
  va_end(args);
  // After fork() the child inherits a CUDA it cannot use; say so, since the
  // runtime's own text ("initialization error") does not.
  const char* hint = err == cudaErrorInitializationError && forked_since_load()
                         ? "; this process was forked after the plugin was loaded, and CUDA "
                           "cannot be used in a child forked after CUDA was initialised in "
                           "its parent (use the 'spawn' start method)"
                         : "";
  return fail(status_of(err), "%s: %s failed: %s (%s)%s", fn, what, cudaGetErrorName(err),
              cudaGetErrorString(err), hint);
}

flagos_status_t exception_status(const char* fn) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  } catch (const std::exception& e) {
    return fail(FLAGOS_ERROR_INTERNAL, "%s: internal error: %s", fn, e.what());
  } catch (...) {
    return fail(FLAGOS_ERROR_INTERNAL, "%s: internal error (unknown exception)", fn);
  }
}

}  // namespace flagos_cuda
