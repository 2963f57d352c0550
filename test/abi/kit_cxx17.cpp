// The plugin kit compiles as C++17, pedantic, every warning an error, and a
// minimal plugin built on it gets a complete table: a required member it
// lacks would fail this build, an optional one it lacks is NULL.
#include "flagos/kit/kit.hpp"

namespace {

struct Minimal {
  static constexpr const char* kName = "minimal";
  static constexpr const char* kVersion = "0";
  static const flagos_extension_t* extensions() { return nullptr; }
  static flagos_status_t configure(const char*, const flagos_host_info_t*) { return FLAGOS_SUCCESS; }
  static const char* last_error_message() { return flagos::kit::last_error(); }
  static flagos_status_t device_count(int32_t*) { return FLAGOS_SUCCESS; }
  static flagos_status_t get_device_properties(flagos_device_t, flagos_device_properties_t*) { return 0; }
  static flagos_status_t get_device(flagos_device_t*) { return 0; }
  static flagos_status_t set_device(flagos_device_t) { return 0; }
  static flagos_status_t device_synchronize(flagos_device_t) { return 0; }
  static flagos_status_t mem_alloc(flagos_device_t, uint64_t, void**) { return 0; }
  static flagos_status_t mem_free(flagos_device_t, void*) { return 0; }
  static flagos_status_t pointer_get_attributes(const void*, int32_t*, flagos_device_t*) { return 0; }
  static flagos_status_t memcpy_sync(void*, const void*, uint64_t, int32_t) { return 0; }
  static flagos_status_t memcpy_async(void*, const void*, uint64_t, int32_t, flagos_stream_t) { return 0; }
  static flagos_status_t memset_async(void*, uint8_t, uint64_t, flagos_stream_t) { return 0; }
  static flagos_status_t get_default_stream(flagos_device_t, flagos_stream_t*) { return 0; }
  static flagos_status_t stream_create(flagos_device_t, int32_t, flagos_stream_t*) { return 0; }
  static flagos_status_t stream_destroy(flagos_stream_t) { return 0; }
  static flagos_status_t stream_query(flagos_stream_t) { return 0; }
  static flagos_status_t stream_synchronize(flagos_stream_t) { return 0; }
  static flagos_status_t stream_wait_event(flagos_stream_t, flagos_event_t) { return 0; }
  static flagos_status_t event_create(flagos_device_t, uint32_t, flagos_event_t*) { return 0; }
  static flagos_status_t event_destroy(flagos_event_t) { return 0; }
  static flagos_status_t event_record(flagos_event_t, flagos_stream_t) { return 0; }
  static flagos_status_t event_query(flagos_event_t) { return 0; }
  static flagos_status_t event_synchronize(flagos_event_t) { return 0; }
};

}  // namespace

int flagos_kit_cxx17_probe() {
  const flagos_plugin_api_t* t = flagos::kit::table<Minimal>();
  return t->device_count != nullptr && t->mem_get_info == nullptr && t->event_elapsed_ms == nullptr ? 1 : 0;
}
