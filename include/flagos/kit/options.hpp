// flagos/kit/options.hpp — reading the handshake's plugin options
// (FLAGOS_PLUGIN_OPTIONS="k=v,k2=v2" or a test harness).
//
// Ownership: returned pointers point into the core's host info, valid only
// during the entry call: copy what must be kept. Threading: stateless.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "flagos/kit/host_services.hpp"
#include "flagos/kit/last_error.hpp"
#include "flagos/plugin_api.h"

namespace flagos::kit {

// INVALID_ARGUMENT when the host lists options in arrays that are NULL or
// hold a NULL key or value; call once before option()/int_option().
inline flagos_status_t check_options(const char* fn, const flagos_host_info_t* host) noexcept {
  if (!FLAGOS_HAS_MEMBER(flagos_host_info_t, host, option_values) || host->num_options == 0)
    return FLAGOS_SUCCESS;
  if (host->option_keys == nullptr || host->option_values == nullptr)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: host lists %zu options but NULL key/value arrays", fn,
                host->num_options);
  for (size_t i = 0; i < host->num_options; ++i)
    if (host->option_keys[i] == nullptr || host->option_values[i] == nullptr)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: option %zu has a NULL key or value", fn, i);
  return FLAGOS_SUCCESS;
}

// The value of option `key` (the last one given wins), or nullptr. Reads
// nothing from arrays check_options() would refuse.
inline const char* option(const flagos_host_info_t* host, const char* key) noexcept {
  if (!FLAGOS_HAS_MEMBER(flagos_host_info_t, host, option_values) || host->option_keys == nullptr ||
      host->option_values == nullptr)
    return nullptr;
  const char* found = nullptr;
  for (size_t i = 0; i < host->num_options; ++i)
    if (host->option_keys[i] != nullptr && host->option_values[i] != nullptr &&
        std::strcmp(host->option_keys[i], key) == 0)
      found = host->option_values[i];
  return found;
}

// Parses option `key` as an integer in [lo, hi]; absent leaves *out alone.
// INVALID_ARGUMENT naming the option and the value otherwise.
inline flagos_status_t int_option(const char* fn, const flagos_host_info_t* host, const char* key,
                                  long long lo, long long hi, long long* out) noexcept {
  const char* text = option(host, key);
  if (text == nullptr) return FLAGOS_SUCCESS;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: option %s=%.64s is not an integer in [%lld, %lld]",
                fn, key, text, lo, hi);
  *out = v;
  return FLAGOS_SUCCESS;
}

// Unknown keys are ignored, as plugin_api.h asks, but not silently: one
// warning per key through the core's log (host_services.hpp), naming the
// keys this plugin knows (`known`, null-terminated). Call from configure().
inline void warn_unknown_options(const flagos_host_info_t* host, const char* const* known) noexcept {
  if (!FLAGOS_HAS_MEMBER(flagos_host_info_t, host, option_values) || host->option_keys == nullptr) return;
  char names[256] = "";
  size_t used = 0;
  for (const char* const* k = known; *k != nullptr && used < sizeof names; ++k)
    used += std::snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", *k);
  for (size_t i = 0; i < host->num_options; ++i) {
    const char* key = host->option_keys[i];
    if (key == nullptr) continue;
    bool ours = false;
    for (const char* const* k = known; *k != nullptr && !ours; ++k) ours = std::strcmp(*k, key) == 0;
    if (!ours)
      host_log(FLAGOS_LOG_LEVEL_WARNING, "option '%.64s' is not one of this plugin's (%s): ignored", key,
               names);
  }
}

}  // namespace flagos::kit
