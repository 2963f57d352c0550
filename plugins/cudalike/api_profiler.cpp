// FLAGOS_EXTENSION_PROFILER (flagos/ext/profiler.h) on the vendor's
// CUPTI-shaped tracer (tracer.h). Present whenever the vendor table names a
// tracer; a missing library is reported by profiler_create, as the header
// asks, because the entry point must not open anything.
#include "api.h"
#include "errors.h"
#include "flagos/ext/profiler.h"
#include "flagos/kit/checks.hpp"
#include "tracer.h"
#include "tracer_library.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::need;

flagos_status_t api_clock_now(int64_t* now_ns) {
  static const char* fn = "clock_now";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, now_ns, "now_ns");
    if (st == FLAGOS_SUCCESS) *now_ns = tracer_now_ns();
    return st;
  });
}

flagos_status_t api_profiler_create(const flagos_profiler_options_t* options, flagos_profiler_t* profiler) {
  static const char* fn = "profiler_create";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, profiler, "profiler");
    if (st != FLAGOS_SUCCESS) return st;
    uint64_t max_records = 0;
    if (options != nullptr &&
        options->struct_size >= offsetof(flagos_profiler_options_t, max_records) + sizeof(uint64_t))
      max_records = options->max_records;
    return tracer_create(fn, max_records, profiler);
  });
}

flagos_status_t api_profiler_start(flagos_profiler_t profiler, uint32_t flags) {
  static const char* fn = "profiler_start";
  return guarded(fn, [&] { return tracer_start(fn, profiler, flags); });
}

flagos_status_t api_profiler_stop(flagos_profiler_t profiler) {
  static const char* fn = "profiler_stop";
  return guarded(fn, [&] { return tracer_stop(fn, profiler); });
}

flagos_status_t api_profiler_collect(flagos_profiler_t profiler, const flagos_activity_record_t** records,
                                     size_t* count, size_t* stride, uint64_t* dropped) {
  static const char* fn = "profiler_collect";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, records, "records");
    if (st == FLAGOS_SUCCESS) st = need(fn, count, "count");
    if (st == FLAGOS_SUCCESS) st = need(fn, stride, "stride");
    if (st != FLAGOS_SUCCESS) return st;
    *stride = sizeof(flagos_activity_record_t);
    return tracer_collect(fn, profiler, records, count, dropped);
  });
}

flagos_status_t api_profiler_destroy(flagos_profiler_t profiler) {
  static const char* fn = "profiler_destroy";
  return guarded(fn, [&] { return tracer_destroy(fn, profiler); });
}

flagos_status_t api_push_correlation(uint64_t id) {
  return guarded("push_correlation", [&] { return tracer_push(id); });
}

flagos_status_t api_pop_correlation(uint64_t* id) {
  return guarded("pop_correlation", [&] { return tracer_pop(id); });
}

}  // namespace

const flagos_extension_t* profiler_extension() {
  if (!has_tracer_library()) return ipc_extension();
  static const flagos_profiler_ext_t ext = {
      {sizeof(flagos_profiler_ext_t), FLAGOS_EXTENSION_PROFILER, FLAGOS_PROFILER_EXT_VERSION, ipc_extension()},
      api_clock_now, api_profiler_create, api_profiler_start, api_profiler_stop, api_profiler_collect,
      api_profiler_destroy, api_push_correlation, api_pop_correlation};
  return &ext.base;
}

}  // namespace flagos_cudalike
