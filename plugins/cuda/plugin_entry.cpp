// The one exported symbol: the handshake and the static table. The entry
// touches neither the driver nor a device, starts no thread, and takes no
// options (the ABI has keys it does not know ignored, so every key is).
#include "api.h"
#include "errors.h"
#include "fork_guard.h"

namespace flagos_cuda {
namespace {

flagos_plugin_api_t make_table() {
  flagos_plugin_api_t t{};
  t.struct_size = sizeof t;
  t.abi_major = FLAGOS_ABI_MAJOR;
  t.abi_minor = FLAGOS_ABI_MINOR;
  t.name = "cuda";
  t.version = "0.1.0";
  t.extensions = testing_extension();
#define FLAGOS_CUDA_SET(member) t.member = api_##member;
  FLAGOS_CUDA_TABLE(FLAGOS_CUDA_SET)
#undef FLAGOS_CUDA_SET
  return t;
}

const flagos_plugin_api_t* table() {
  static const flagos_plugin_api_t t = make_table();
  return &t;
}

flagos_status_t entry(const flagos_host_info_t* host, const flagos_plugin_api_t** api) {
  static const char* fn = "flagos_plugin_get_api";
  flagos_status_t st = need(fn, api, "api");
  if (st != FLAGOS_SUCCESS) return st;
  *api = table();  // also on failure, so that the core can read last_error_message
  if ((st = need(fn, host, "host")) != FLAGOS_SUCCESS) return st;
  if (!FLAGOS_HAS_MEMBER(flagos_host_info_t, host, abi_major))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: host->struct_size %zu is too small", fn,
                host->struct_size);
  if (host->abi_major != FLAGOS_ABI_MAJOR)
    return fail(FLAGOS_ERROR_INCOMPATIBLE_ABI, "%s: the core speaks plugin ABI %u, this plugin %d",
                fn, host->abi_major, FLAGOS_ABI_MAJOR);
  install_fork_handlers();
  return FLAGOS_SUCCESS;
}

}  // namespace
}  // namespace flagos_cuda

extern "C" FLAGOS_EXPORT flagos_status_t flagos_plugin_get_api(const flagos_host_info_t* host,
                                                               const flagos_plugin_api_t** api) {
  return flagos_cuda::guarded("flagos_plugin_get_api", [&] { return flagos_cuda::entry(host, api); });
}
