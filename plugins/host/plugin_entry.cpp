// The one exported symbol: handshake, options, and the static table.
#include <mutex>

#include "api.h"
#include "errors.h"
#include "fork_guard.h"
#include "kernels.h"
#include "options.h"

namespace flagos_host {
namespace {

flagos_plugin_api_t make_table() {
  flagos_plugin_api_t t{};
  t.struct_size = sizeof(flagos_plugin_api_t);
  t.abi_major = FLAGOS_ABI_MAJOR;
  t.abi_minor = FLAGOS_ABI_MINOR;
  t.name = "host";
  t.version = "0.1.0";
  t.extensions = kernels_extension();  // then the testing extension
  t.last_error_message = api_last_error_message;
  t.device_count = api_device_count;
  t.get_device_properties = api_get_device_properties;
  t.get_device = api_get_device;
  t.set_device = api_set_device;
  t.device_synchronize = api_device_synchronize;
  t.mem_get_info = api_mem_get_info;
  t.device_can_access_peer = api_device_can_access_peer;
  t.mem_alloc = api_mem_alloc;
  t.mem_free = api_mem_free;
  t.host_alloc = api_host_alloc;
  t.host_free = api_host_free;
  t.pointer_get_attributes = api_pointer_get_attributes;
  t.memcpy_sync = api_memcpy_sync;
  t.memcpy_async = api_memcpy_async;
  t.memcpy_peer_async = api_memcpy_peer_async;
  t.memset_async = api_memset_async;
  t.get_default_stream = api_get_default_stream;
  t.stream_create = api_stream_create;
  t.stream_destroy = api_stream_destroy;
  t.stream_query = api_stream_query;
  t.stream_synchronize = api_stream_synchronize;
  t.stream_wait_event = api_stream_wait_event;
  t.stream_native_handle = nullptr;  // no vendor stream to hand out
  t.event_create = api_event_create;
  t.event_destroy = api_event_destroy;
  t.event_record = api_event_record;
  t.event_query = api_event_query;
  t.event_synchronize = api_event_synchronize;
  t.event_elapsed_ms = api_event_elapsed_ms;
  return t;
}

const flagos_plugin_api_t* table() {
  static const flagos_plugin_api_t t = make_table();
  return &t;
}

std::mutex g_entry_mutex;
bool g_configured = false;  // options are fixed by the first successful call

flagos_status_t entry(const flagos_host_info_t* host, const flagos_plugin_api_t** api) {
  static const char* fn = "flagos_plugin_get_api";
  if (host == nullptr || api == nullptr)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: host or api is NULL", fn);
  if (!FLAGOS_HAS_MEMBER(flagos_host_info_t, host, abi_major))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: host->struct_size %zu is too small", fn,
                host->struct_size);
  if (host->abi_major != FLAGOS_ABI_MAJOR)
    return fail(FLAGOS_ERROR_INCOMPATIBLE_ABI, "%s: core speaks ABI major %u, this plugin %d", fn,
                host->abi_major, FLAGOS_ABI_MAJOR);
  Options opts;
  flagos_status_t st = parse_options(fn, host, &opts);
  if (st != FLAGOS_SUCCESS) return st;
  std::lock_guard<std::mutex> lock(g_entry_mutex);
  if (!g_configured) {
    set_options(opts);
    install_fork_handlers();
    g_configured = true;
  } else if (!(opts == options())) {
    // Device count and capacity are promised stable for the process lifetime.
    return fail(FLAGOS_ERROR_INVALID_STATE,
                "%s: called again with different options (devices=%d strict=%d memory_mb=%llu "
                "already in force)",
                fn, options().devices, options().strict ? 1 : 0,
                (unsigned long long)(options().capacity_bytes >> 20));
  }
  *api = table();
  return FLAGOS_SUCCESS;
}

}  // namespace
}  // namespace flagos_host

extern "C" FLAGOS_EXPORT flagos_status_t flagos_plugin_get_api(const flagos_host_info_t* host,
                                                               const flagos_plugin_api_t** api) {
  const flagos_status_t status =
      flagos_host::guarded("flagos_plugin_get_api", [&] { return flagos_host::entry(host, api); });
  // Also on failure, so that the core can read last_error_message (which option, which value).
  if (status != FLAGOS_SUCCESS && api != nullptr) *api = flagos_host::table();
  return status;
}
