// The functions behind the plugin table, one group per api_*.cpp. Each one is
// a C ABI entry point: it returns a status and never lets an exception out.
#pragma once

#include "flagos/flagos.h"

namespace flagos_host {

// api_device.cpp
const char* api_last_error_message();
flagos_status_t api_device_count(int32_t* count);
flagos_status_t api_get_device_properties(flagos_device_t device,
                                          flagos_device_properties_t* props);
flagos_status_t api_get_device(flagos_device_t* device);
flagos_status_t api_set_device(flagos_device_t device);
flagos_status_t api_device_synchronize(flagos_device_t device);
flagos_status_t api_mem_get_info(flagos_device_t device, uint64_t* free_bytes,
                                 uint64_t* total_bytes);
flagos_status_t api_device_can_access_peer(flagos_device_t device, flagos_device_t peer,
                                           int32_t* can_access);

// api_memory.cpp
flagos_status_t api_mem_alloc(flagos_device_t device, uint64_t size, void** ptr);
flagos_status_t api_mem_free(flagos_device_t device, void* ptr);
flagos_status_t api_host_alloc(uint64_t size, void** ptr);
flagos_status_t api_host_free(void* ptr);
flagos_status_t api_pointer_get_attributes(const void* ptr, int32_t* kind, flagos_device_t* device);

// api_copy.cpp
flagos_status_t api_memcpy_sync(void* dst, const void* src, uint64_t size, int32_t kind);
flagos_status_t api_memcpy_async(void* dst, const void* src, uint64_t size, int32_t kind,
                                 flagos_stream_t stream);
flagos_status_t api_memcpy_peer_async(void* dst, flagos_device_t dst_device, const void* src,
                                      flagos_device_t src_device, uint64_t size,
                                      flagos_stream_t stream);
flagos_status_t api_memset_async(void* dst, uint8_t value, uint64_t size, flagos_stream_t stream);

// api_stream.cpp
flagos_status_t api_get_default_stream(flagos_device_t device, flagos_stream_t* stream);
flagos_status_t api_stream_create(flagos_device_t device, int32_t priority,
                                  flagos_stream_t* stream);
flagos_status_t api_stream_destroy(flagos_stream_t stream);
flagos_status_t api_stream_query(flagos_stream_t stream);
flagos_status_t api_stream_synchronize(flagos_stream_t stream);
flagos_status_t api_stream_wait_event(flagos_stream_t stream, flagos_event_t event);

// api_event.cpp
flagos_status_t api_event_create(flagos_device_t device, uint32_t flags, flagos_event_t* event);
flagos_status_t api_event_destroy(flagos_event_t event);
flagos_status_t api_event_record(flagos_event_t event, flagos_stream_t stream);
flagos_status_t api_event_query(flagos_event_t event);
flagos_status_t api_event_synchronize(flagos_event_t event);
flagos_status_t api_event_elapsed_ms(flagos_event_t start, flagos_event_t end, float* milliseconds);

// api_testing.cpp: the FLAGOS_EXTENSION_TESTING table (end of the chain).
const flagos_extension_t* testing_extension();

}  // namespace flagos_host
