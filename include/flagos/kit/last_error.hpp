// flagos/kit/last_error.hpp — the calling thread's last-error message, the
// storage behind the ABI's last_error_message.
//
// Ownership: the message lives in a fixed per-thread buffer of the plugin;
// last_error() stays valid until the same thread's next fail().
// Threading: per thread; no locks.
// Errors: recording never allocates and never throws, so it also works when
// the failure being reported is running out of memory. Longer messages are
// cut at kLastErrorBytes - 1 bytes.
#pragma once

#include <cstdarg>
#include <cstdio>

#include "flagos/abi.h"

namespace flagos::kit {

inline constexpr size_t kLastErrorBytes = 2048;

namespace detail {
inline thread_local char t_last_error[kLastErrorBytes];
}  // namespace detail

// Stores the printf-style message as the calling thread's last error and
// returns `status`, so that a failing path reads `return fail(STATUS, ...)`.
inline flagos_status_t fail(flagos_status_t status, const char* fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));

inline flagos_status_t fail(flagos_status_t status, const char* fmt, ...) noexcept {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(detail::t_last_error, kLastErrorBytes, fmt, args);
  va_end(args);
  return status;
}

// The calling thread's message for its most recent failure; "" before the
// first one. Never NULL.
inline const char* last_error() noexcept { return detail::t_last_error; }

}  // namespace flagos::kit
