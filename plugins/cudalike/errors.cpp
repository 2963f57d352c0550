#include "errors.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "flagos/kit/fork_guard.hpp"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

std::atomic<const Runtime*> g_loaded{nullptr};  // set by runtime_ready, always to the same table

}  // namespace

flagos_status_t runtime_ready(const char* fn) {
  flagos_status_t st = flagos::kit::fork_guard().use(fn);
  if (st != FLAGOS_SUCCESS) return st;
  const Runtime* r = load(fn, &st);
  if (r != nullptr) g_loaded.store(r, std::memory_order_release);
  return st;
}

const Runtime& rt() { return *g_loaded.load(std::memory_order_acquire); }
const Runtime* loaded_runtime() { return g_loaded.load(std::memory_order_acquire); }

flagos_status_t status_of(int err) {
  const Vendor& v = vendor();
  if (err == 0) return FLAGOS_SUCCESS;
  if (err == v.error_not_ready) return FLAGOS_NOT_READY;
  for (const ErrorCode* e = v.errors; e->code != 0; ++e)
    if (e->code == err) return e->status;
  return FLAGOS_ERROR_DEVICE;
}

flagos_status_t rt_fail(const char* fn, int err, const char* call, ...) {
  const Vendor& v = vendor();
  const Runtime& r = rt();
  r.get_last_error();  // reset the non-sticky per-thread error; sticky ones stay
  char what[256];
  va_list args;
  va_start(args, call);
  std::vsnprintf(what, sizeof what, call, args);
  va_end(args);
  const char* name = r.get_error_name ? r.get_error_name(err) : nullptr;
  const char* text = r.get_error_string ? r.get_error_string(err) : nullptr;
  const flagos_status_t status = status_of(err);
  // A child forked after its parent initialised the runtime inherits one it
  // cannot use; the runtime's own text ("initialization error") does not say so.
  const char* hint = status == FLAGOS_ERROR_RUNTIME_UNAVAILABLE && flagos::kit::fork_guard().forked_since_load()
                         ? "; this process was forked after the plugin was loaded, and the runtime "
                           "cannot be used in a child forked after it was initialised in its parent "
                           "(use the 'spawn' start method)"
                         : "";
  return fail(status, "%s: %s%s failed: %s %d (%s)%s", fn, v.prefix, what, name ? name : "error", err,
              text ? text : "no description", hint);
}

}  // namespace flagos_cudalike
