// The handshake half of HostPlugin (api.h) and the one exported symbol, which
// the kit generates from HostPlugin together with the static table.
#include <mutex>
#include <vector>

#include "api.h"
#include "collectives.h"
#include "comm.h"
#include "flagos/kit/fork_guard.hpp"
#include "graphs.h"
#include "handles.h"
#include "ipc.h"
#include "kernels.h"
#include "kit.h"
#include "flagos/kit/entry.hpp"
#include "memory.h"
#include "options.h"
#include "profiler.h"

namespace flagos_host {
namespace {

bool g_configured = false;  // options are fixed by the first successful call

// Completes "<fn>: " in a child forked after stream workers started.
constexpr const char* kForkLost =
    "unusable after fork(): the parent had started stream worker threads, which the child does "
    "not have; fork before the first stream work, or use the plugin only in the parent";

// Every global mutex, in lock order, so the child never inherits one held.
void install_fork_guard() {
  std::vector<std::mutex*> hold = handle_mutexes();
  hold.push_back(&memory_mutex());
  hold.push_back(&comm_table_mutex());
  for (std::mutex* m : graph_mutexes()) hold.push_back(m);
  for (std::mutex* m : profiler_mutexes()) hold.push_back(m);
  kit::fork_guard().install(kForkLost, std::move(hold));
}

}  // namespace

const flagos_extension_t* HostPlugin::extensions() {
  return kernels_extension();  // then graphs, profiler, ipc, collectives (unless =0 each), testing
}

// Runs under the kit's entry lock.
flagos_status_t HostPlugin::configure(const char* fn, const flagos_host_info_t* host) {
  Options opts;
  flagos_status_t st = parse_options(fn, host, &opts);
  if (st != FLAGOS_SUCCESS) return st;
  if (!g_configured) {
    set_options(opts);
    warn_unknown_options(host);
    // The table (and so the chain's head) exists already; its links are
    // settled here, before the first successful call returns the table.
    const flagos_extension_t* rest = opts.collectives ? collectives_extension() : testing_extension();
    set_ipc_next(rest);
    if (opts.ipc) rest = ipc_extension();
    set_profiler_next(rest);
    if (opts.profiler) rest = profiler_extension();
    set_graphs_next(rest);
    set_kernels_next(opts.graphs ? graphs_extension() : rest);
    install_fork_guard();
    g_configured = true;
  } else if (!(opts == options())) {
    // Device count and capacity are promised stable for the process lifetime.
    return fail(FLAGOS_ERROR_INVALID_STATE,
                "%s: called again with different options (devices=%d strict=%d memory_mb=%llu "
                "collectives=%d graphs=%d profiler=%d ipc=%d already in force)",
                fn, options().devices, options().strict ? 1 : 0,
                (unsigned long long)(options().capacity_bytes >> 20),
                options().collectives ? 1 : 0, options().graphs ? 1 : 0,
                options().profiler ? 1 : 0, options().ipc ? 1 : 0);
  }
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_host

FLAGOS_KIT_PLUGIN_ENTRY(flagos_host::HostPlugin)
