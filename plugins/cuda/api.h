// The entry points behind the plugin table, one group per api_*.cpp. Each is
// declared from the table member it fills, so its signature is the ABI's by
// construction; each returns a status and lets no exception out.
#pragma once

#include <type_traits>

#include "flagos/flagos.h"

namespace flagos_cuda {

// Every member of the ABI 1.0 table, in table order. api_<member> implements it.
#define FLAGOS_CUDA_TABLE(X)                                                                 \
  X(last_error_message) X(device_count) X(get_device_properties) X(get_device) X(set_device) \
  X(device_synchronize) X(mem_get_info) X(device_can_access_peer)                           \
  X(mem_alloc) X(mem_free) X(host_alloc) X(host_free) X(pointer_get_attributes)             \
  X(memcpy_sync) X(memcpy_async) X(memcpy_peer_async) X(memset_async)                       \
  X(get_default_stream) X(stream_create) X(stream_destroy) X(stream_query)                  \
  X(stream_synchronize) X(stream_wait_event) X(stream_native_handle)                        \
  X(event_create) X(event_destroy) X(event_record) X(event_query) X(event_synchronize)      \
  X(event_elapsed_ms)

#define FLAGOS_CUDA_DECLARE(member) \
  std::remove_pointer_t<decltype(flagos_plugin_api_t::member)> api_##member;
FLAGOS_CUDA_TABLE(FLAGOS_CUDA_DECLARE)
#undef FLAGOS_CUDA_DECLARE

// api_testing.cpp: FLAGOS_EXTENSION_TESTING, the whole extension chain.
const flagos_extension_t* testing_extension();

}  // namespace flagos_cuda
