#include "options.h"

#include <unistd.h>

#include "flagos/kit/options.hpp"
#include "kit.h"

namespace flagos_host {
namespace {

Options g_options = default_options();

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
  flagos_status_t st = kit::check_options(fn, host);
  if (st != FLAGOS_SUCCESS) return st;
  Options o = default_options();
  long long devices = o.devices, strict = 0, collectives = 1, graphs = 1, profiler = 1, ipc = 1;
  long long memory_mb = -1;  // -1: keep the default capacity
  st = kit::int_option(fn, host, "devices", 0, kMaxDevices, &devices);
  if (st == FLAGOS_SUCCESS) st = kit::int_option(fn, host, "strict", 0, 1, &strict);
  if (st == FLAGOS_SUCCESS)
    st = kit::int_option(fn, host, "memory_mb", 0, static_cast<long long>(UINT64_MAX >> 20),
                         &memory_mb);
  if (st == FLAGOS_SUCCESS) st = kit::int_option(fn, host, "collectives", 0, 1, &collectives);
  if (st == FLAGOS_SUCCESS) st = kit::int_option(fn, host, "graphs", 0, 1, &graphs);
  if (st == FLAGOS_SUCCESS) st = kit::int_option(fn, host, "profiler", 0, 1, &profiler);
  if (st == FLAGOS_SUCCESS) st = kit::int_option(fn, host, "ipc", 0, 1, &ipc);
  if (st != FLAGOS_SUCCESS) return st;
  o.collectives = collectives == 1;
  o.graphs = graphs == 1;
  o.profiler = profiler == 1;
  o.ipc = ipc == 1;
  o.devices = static_cast<int32_t>(devices);
  o.strict = strict == 1;
  if (memory_mb >= 0) o.capacity_bytes = static_cast<uint64_t>(memory_mb) << 20;
  *out = o;
  return FLAGOS_SUCCESS;
}

void warn_unknown_options(const flagos_host_info_t* host) {
  static const char* const known[] = {"devices", "strict", "memory_mb", "collectives", "graphs", "profiler",
                                      "ipc", nullptr};
  kit::warn_unknown_options(host, known);
}

const Options& options() { return g_options; }

void set_options(const Options& opts) { g_options = opts; }

}  // namespace flagos_host
