// flagos/kit/guarded.hpp — the wrapper every entry point runs its body in, so
// that no C++ exception crosses the C ABI.
//
// Errors: std::bad_alloc becomes FLAGOS_ERROR_OUT_OF_HOST_MEMORY, any other
// exception FLAGOS_ERROR_INTERNAL, each with a last-error message naming `fn`.
// Threading: no state of its own.
#pragma once

#include <exception>
#include <new>

#include "flagos/kit/last_error.hpp"

namespace flagos::kit {

// Runs `body` (returning flagos_status_t) and turns an escaping exception
// into a status:  return guarded("mem_alloc", [&] { ... });
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

}  // namespace flagos::kit
