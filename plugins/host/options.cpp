#include "options.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "errors.h"

namespace flagos_host {
namespace {

Options g_options = default_options();

// Parses a whole decimal string into [lo, hi]; false on junk or overflow.
bool parse_u64(const char* text, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (text == nullptr || *text == '\0' || *text == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

flagos_status_t apply(const char* fn, const char* key, const char* value, Options* o) {
  uint64_t v = 0;
  if (std::strcmp(key, "devices") == 0) {
    if (!parse_u64(value, 0, kMaxDevices, &v))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: option devices=%s is not an integer in [0, %d]", fn,
                  value ? value : "(null)", kMaxDevices);
    o->devices = static_cast<int32_t>(v);
  } else if (std::strcmp(key, "strict") == 0) {
    if (!parse_u64(value, 0, 1, &v))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: option strict=%s is not 0 or 1", fn,
                  value ? value : "(null)");
    o->strict = v == 1;
  } else if (std::strcmp(key, "memory_mb") == 0) {
    if (!parse_u64(value, 0, UINT64_MAX >> 20, &v))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: option memory_mb=%s is not a size in MiB",
                  fn, value ? value : "(null)");
    o->capacity_bytes = v << 20;
  }
  return FLAGOS_SUCCESS;  // unknown keys are ignored by contract
}

}  // namespace

Options default_options() {
  Options o;
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0)
    o.capacity_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 2;
  else
    o.capacity_bytes = uint64_t{1} << 30;  // sysconf failed: a modest 1 GiB
  return o;
}

flagos_status_t parse_options(const char* fn, const flagos_host_info_t* host, Options* out) {
  Options o = default_options();
  bool has_options = FLAGOS_HAS_MEMBER(flagos_host_info_t, host, option_values);
  size_t n = has_options ? host->num_options : 0;
  if (n > 0 && (host->option_keys == nullptr || host->option_values == nullptr))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: host lists %zu options but NULL key/value arrays", fn, n);
  for (size_t i = 0; i < n; ++i) {
    const char* key = host->option_keys[i];
    if (key == nullptr) continue;
    flagos_status_t st = apply(fn, key, host->option_values[i], &o);
    if (st != FLAGOS_SUCCESS) return st;
  }
  *out = o;
  return FLAGOS_SUCCESS;
}

const Options& options() { return g_options; }

void set_options(const Options& opts) { g_options = opts; }

}  // namespace flagos_host
