// The functions behind the plugin table, as the static members of the
// implementation struct that FLAGOS_KIT_PLUGIN_ENTRY turns into the table
// (plugin_entry.cpp), one group per api_*.cpp. Each is a C ABI entry point:
// it returns a status and never lets an exception out.
#pragma once

#include "flagos/flagos.h"
#include "flagos/kit/entry.hpp"

namespace flagos_host {

struct HostPlugin {
  static constexpr const char* kName = "host";
  static constexpr const char* kVersion = "0.1.0";

  // plugin_entry.cpp
  static const flagos_extension_t* extensions();
  static flagos_status_t configure(const char* fn, const flagos_host_info_t* host);

  // api_device.cpp
  FLAGOS_KIT_MEMBER(last_error_message)
  FLAGOS_KIT_MEMBER(device_count)
  FLAGOS_KIT_MEMBER(get_device_properties)
  FLAGOS_KIT_MEMBER(get_device)
  FLAGOS_KIT_MEMBER(set_device)
  FLAGOS_KIT_MEMBER(device_synchronize)
  FLAGOS_KIT_MEMBER(mem_get_info)
  FLAGOS_KIT_MEMBER(device_can_access_peer)
  // api_memory.cpp
  FLAGOS_KIT_MEMBER(mem_alloc)
  FLAGOS_KIT_MEMBER(mem_free)
  FLAGOS_KIT_MEMBER(host_alloc)
  FLAGOS_KIT_MEMBER(host_free)
  FLAGOS_KIT_MEMBER(pointer_get_attributes)
  // api_copy.cpp
  FLAGOS_KIT_MEMBER(memcpy_sync)
  FLAGOS_KIT_MEMBER(memcpy_async)
  FLAGOS_KIT_MEMBER(memcpy_peer_async)
  FLAGOS_KIT_MEMBER(memset_async)
  // api_stream.cpp (no stream_native_handle: there is no vendor stream to hand out)
  FLAGOS_KIT_MEMBER(get_default_stream)
  FLAGOS_KIT_MEMBER(stream_create)
  FLAGOS_KIT_MEMBER(stream_destroy)
  FLAGOS_KIT_MEMBER(stream_query)
  FLAGOS_KIT_MEMBER(stream_synchronize)
  FLAGOS_KIT_MEMBER(stream_wait_event)
  // api_event.cpp
  FLAGOS_KIT_MEMBER(event_create)
  FLAGOS_KIT_MEMBER(event_destroy)
  FLAGOS_KIT_MEMBER(event_record)
  FLAGOS_KIT_MEMBER(event_query)
  FLAGOS_KIT_MEMBER(event_synchronize)
  FLAGOS_KIT_MEMBER(event_elapsed_ms)
};

// api_testing.cpp: the FLAGOS_EXTENSION_TESTING table (end of the chain).
const flagos_extension_t* testing_extension();

}  // namespace flagos_host
