// An optional vendor library beside the runtime (the communicator, the
// activity tracer): opened at its first use, never at the handshake, and the
// outcome of that one attempt kept for the process, so that every later call
// answers at once with the same library or the same reason.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "flagos/kit/last_error.hpp"
#include "flagos/kit/runtime_library.hpp"

namespace flagos_cudalike {

// Ownership: leak instances (static pointers): a library may be called
// during static destruction at exit. Threading: load() and loaded() are safe
// from any thread; the first load() runs `open` once, under call_once.
template <class Lib>
class OptionalLibrary {
 public:
  // The library, opened now at the first call by open(Lib*, std::string* why)
  // (false: unusable, with why); nullptr with why() afterwards.
  template <class Open>
  const Lib* load(Open&& open) {
    std::call_once(once_, [&] {
      if (open(&lib_, &why_)) loaded_.store(&lib_, std::memory_order_release);
    });
    return loaded();
  }
  // load(), for an entry point: SUCCESS in *status, or RUNTIME_UNAVAILABLE
  // with "<fn>: <what> is unavailable: <why>" as the last error and nullptr.
  template <class Open>
  const Lib* load(const char* fn, const std::string& what, Open&& open, flagos_status_t* status) {
    const Lib* lib = load(std::forward<Open>(open));
    *status = lib != nullptr ? FLAGOS_SUCCESS
                             : flagos::kit::fail(FLAGOS_ERROR_RUNTIME_UNAVAILABLE, "%s: %s is unavailable: %s",
                                                 fn, what.c_str(), why_.c_str());
    return lib;
  }
  // The library if an earlier load() succeeded, else nullptr. Never opens it.
  const Lib* loaded() const { return loaded_.load(std::memory_order_acquire); }
  // Why the library is unusable; only after load() returned nullptr.
  const std::string& why() const { return why_; }

 private:
  std::once_flag once_;
  Lib lib_;
  std::string why_;
  std::atomic<const Lib*> loaded_{nullptr};
};

// One entry of an X-macro call list X(member, suffix, required, ret, params)
// resolved as `prefix + suffix` from `handle` into `lib->member`; the first
// required symbol that is absent is named in `missing`. The four names are
// the caller's locals.
#define FLAGOS_CUDALIKE_RESOLVE_CALL(member, suffix, required, ret, params)                      \
  lib->member = flagos::kit::symbol<decltype(lib->member)>(handle, (prefix + suffix).c_str()); \
  if ((required) && lib->member == nullptr && missing.empty()) missing = prefix + suffix;

}  // namespace flagos_cudalike
