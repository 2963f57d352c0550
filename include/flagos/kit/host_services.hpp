// flagos/kit/host_services.hpp — the core's services (flagos_host_services_t,
// ABI 1.6) for a plugin on the kit: kit::entry<Impl>() keeps the table the
// core offers at the handshake; any file of the plugin then reaches it.
//
// Threading: keep() runs under the entry's lock; the accessors are lock-free
// and safe from any thread. A core older than 1.6, or a host offering no
// services (the conformance runner), leaves them absent: host_services()
// is null, host_log() prints nothing and the caller keeps its own fallback.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "flagos/plugin_api.h"

namespace flagos::kit {
namespace detail {
inline std::atomic<const flagos_host_services_t*> g_host_services{nullptr};
}  // namespace detail

// Keeps host->services when the host's struct holds it (the table is the
// core's, process lifetime). Called by entry<Impl>() before configure().
inline void keep_host_services(const flagos_host_info_t* host) noexcept {
  const flagos_host_services_t* services =
      FLAGOS_HAS_MEMBER(flagos_host_info_t, host, services) ? host->services : nullptr;
  if (services != nullptr && services->struct_size < FLAGOS_STRUCT_SIZE(flagos_host_services_t, context))
    services = nullptr;  // too small to hold its own context: not usable
  if (services != nullptr) detail::g_host_services.store(services, std::memory_order_release);
}

// The core's services, or null when it offers none.
inline const flagos_host_services_t* host_services() noexcept {
  return detail::g_host_services.load(std::memory_order_acquire);
}

// One line through the core's log ("[flagos] plugin <name>: ..."), printf
// style; nothing when the core offers no log. Lines over 1 KiB are cut.
inline void host_log(int32_t level, const char* fmt, ...) noexcept __attribute__((format(printf, 2, 3)));
inline void host_log(int32_t level, const char* fmt, ...) noexcept {
  const flagos_host_services_t* s = host_services();
  if (s == nullptr || !FLAGOS_HAS_FN(flagos_host_services_t, s, log)) return;
  char line[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  s->log(s->context, level, line);
}

}  // namespace flagos::kit
