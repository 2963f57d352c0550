// The one exported symbol. The entry touches neither the runtime nor a
// device and starts no thread; it only fixes the options:
//   runtime=<path>  the vendor runtime library to use instead of searching.
#include <string>

#include "api.h"
#include "errors.h"
#include "flagos/kit/entry.hpp"
#include "flagos/kit/fork_guard.hpp"
#include "flagos/kit/options.hpp"
#include "handles.h"
#include "pointers.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

bool g_configured = false;  // under the kit's entry lock
std::string g_runtime;      // the runtime= value in force

}  // namespace

const char* const Plugin::kName = vendor().name;

flagos_status_t Plugin::configure(const char* fn, const flagos_host_info_t* host) {
  flagos_status_t st = flagos::kit::check_options(fn, host);
  if (st != FLAGOS_SUCCESS) return st;
  const char* given = flagos::kit::option(host, "runtime");
  const std::string runtime = given != nullptr ? given : "";
  if (g_configured) {
    if (runtime == g_runtime) return FLAGOS_SUCCESS;
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: called again with runtime=%s while runtime=%s is in force", fn,
                runtime.c_str(), g_runtime.c_str());
  }
  static const char* const known[] = {"runtime", nullptr};
  flagos::kit::warn_unknown_options(host, known);
  if (given != nullptr && given[0] != '/')
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: option runtime=%s is not an absolute path to a library", fn,
                given);
  set_runtime_override(runtime);
  g_runtime = runtime;
  // The runtime cannot be used in a child forked after the parent
  // initialised it; the tables must not be inherited locked. Lock order:
  // default_stream_object holds defaults_mutex while adding to streams().
  static const std::string reason = std::string("the ") + vendor().display +
                                    " runtime was initialised in the parent before this process was forked, "
                                    "and a forked child cannot use it; fork before the first device use, "
                                    "or use the 'spawn' start method";
  std::vector<std::mutex*> hold = {&defaults_mutex(), &streams().mutex(), &events().mutex(), &blocks_mutex()};
  for (std::mutex* m : graph_mutexes()) hold.push_back(m);
  flagos::kit::fork_guard().install(reason.c_str(), std::move(hold));
  g_configured = true;
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_cudalike

FLAGOS_KIT_PLUGIN_ENTRY(flagos_cudalike::Plugin)
