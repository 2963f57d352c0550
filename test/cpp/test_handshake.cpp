// validate_table on hand-made tables: the handshake rules (docs/architecture.md, "Plugin ABI").
#include <cstring>

#include "catch.hpp"
#include "plugin/handshake.h"

namespace {

flagos_status_t ok_fn() { return FLAGOS_SUCCESS; }

// A table whose every function slot holds a (never called) non-NULL pointer.
flagos_plugin_api_t complete_table() {
  flagos_plugin_api_t api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = sizeof(api);
  api.abi_major = FLAGOS_ABI_MAJOR;
  api.abi_minor = FLAGOS_ABI_MINOR;
  api.name = "t";
  void (*any)() = reinterpret_cast<void (*)()>(&ok_fn);
  auto* slots = reinterpret_cast<char*>(&api) + offsetof(flagos_plugin_api_t, last_error_message);
  const size_t n = (sizeof(api) - offsetof(flagos_plugin_api_t, last_error_message)) / sizeof(any);
  for (size_t i = 0; i < n; ++i) std::memcpy(slots + i * sizeof(any), &any, sizeof(any));
  return api;
}

}  // namespace

TEST_CASE("a complete table is accepted", "[handshake]") {
  auto api = complete_table();
  CHECK(flagos::plugin::validate_table(&api).empty());
  CHECK(flagos::plugin::validate_table(nullptr) == "the entry point returned success but no table");
}

TEST_CASE("optional members may be NULL", "[handshake]") {
  auto api = complete_table();
  api.mem_get_info = nullptr;
  api.host_alloc = nullptr;
  api.host_free = nullptr;
  api.event_elapsed_ms = nullptr;
  api.memcpy_peer_async = nullptr;
  api.stream_native_handle = nullptr;
  api.device_can_access_peer = nullptr;
  CHECK(flagos::plugin::validate_table(&api).empty());
}

TEST_CASE("each required member is checked", "[handshake]") {
  auto api = complete_table();
  api.event_synchronize = nullptr;
  CHECK(flagos::plugin::validate_table(&api) == "required member 'event_synchronize' is NULL");
  api = complete_table();
  api.last_error_message = nullptr;
  CHECK(flagos::plugin::validate_table(&api) == "required member 'last_error_message' is NULL");
}

TEST_CASE("the effective minor is the smaller of the two", "[handshake]") {
  auto api = complete_table();
  api.abi_minor = FLAGOS_ABI_MINOR + 3;
  CHECK(flagos::plugin::validate_table(&api).empty());
  CHECK(flagos::plugin::effective_minor(api) == FLAGOS_ABI_MINOR);
}

TEST_CASE("a stale struct_size is refused even when the minor matches", "[handshake]") {
  auto api = complete_table();
  api.struct_size = FLAGOS_PLUGIN_API_SIZE_1_0 - sizeof(void*);
  const std::string why = flagos::plugin::validate_table(&api);
  CHECK(why.find("stale struct_size") != std::string::npos);
}

TEST_CASE("a nameless plugin is refused", "[handshake]") {
  auto api = complete_table();
  api.name = "";
  CHECK(flagos::plugin::validate_table(&api) == "the table has no plugin name");
}
