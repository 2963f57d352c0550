// Per-thread last-error message and the guard that keeps C++ exceptions from
// crossing the C ABI.
#pragma once

#include <exception>
#include <new>

#include "flagos/abi.h"

namespace flagos_host {

// Records a printf-style message for the calling thread and returns `status`.
// Never throws: if the message cannot be stored a static fallback is used.
flagos_status_t fail(flagos_status_t status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// The calling thread's message for its most recent failure ("" when none).
const char* last_error();

// Runs an entry point body; an exception becomes a status code plus message.
template <class Body>
flagos_status_t guarded(const char* fn, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  } catch (const std::exception& e) {
    return fail(FLAGOS_ERROR_INTERNAL, "%s: internal error: %s", fn, e.what());
  } catch (...) {
    return fail(FLAGOS_ERROR_INTERNAL, "%s: internal error (unknown exception)", fn);
  }
}

}  // namespace flagos_host
