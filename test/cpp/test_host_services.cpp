// The services the core offers plugins (flagos_host_services_t, ABI 1.6):
// one table per plugin name for the process, its log lines, and the
// workspace memory the device layer lends (absent here: this test links the
// torch-free runtime alone, as a host without a device layer would).
#include <string>

#include "catch.hpp"
#include "plugin/host_services.h"
#include "test_support.h"

using flagos::plugin::host_services;

TEST_CASE("each plugin name has one services table for the process", "[host_services]") {
  const flagos_host_services_t* a = host_services("vendor_a");
  CHECK(a == host_services("vendor_a"));
  CHECK(a != host_services("vendor_b"));
  CHECK(a->struct_size == sizeof(flagos_host_services_t));
  CHECK(FLAGOS_HAS_FN(flagos_host_services_t, a, log));
  // No device layer lends memory here: no memory functions to call.
  CHECK_FALSE(FLAGOS_HAS_FN(flagos_host_services_t, a, workspace_alloc));
  CHECK_FALSE(FLAGOS_HAS_FN(flagos_host_services_t, a, record_stream));
}

TEST_CASE("a plugin's log line names the plugin and stays one line", "[host_services]") {
  const flagos_host_services_t* s = host_services("vendor_a");
  flagos::test::CapturedLog log;
  s->log(s->context, FLAGOS_LOG_LEVEL_WARNING, "option 'x' ignored\nsecond line");
  s->log(s->context, FLAGOS_LOG_LEVEL_INFO, "");
  s->log(s->context, FLAGOS_LOG_LEVEL_ERROR, nullptr);
  CHECK(log.text() == "[flagos] plugin vendor_a: option 'x' ignored\n");
}

namespace {

int g_frees = 0;

flagos_status_t fake_allocate(flagos_device_t device, flagos_stream_t, uint64_t bytes, void** ptr,
                              std::string* why) {
  if (bytes > 1024) {
    *why = "out of memory on device " + std::to_string(device);
    return FLAGOS_ERROR_OUT_OF_MEMORY;
  }
  static char block[1024];
  *ptr = block;
  return FLAGOS_SUCCESS;
}
flagos_status_t fake_free(void*, std::string*) {
  ++g_frees;
  return FLAGOS_SUCCESS;
}
flagos_status_t fake_record(void*, flagos_stream_t, std::string* why) {
  *why = "the address is in no live block";
  return FLAGOS_ERROR_INVALID_ARGUMENT;
}

}  // namespace

TEST_CASE("workspace memory is the memory the device layer lends", "[host_services]") {
  static const flagos::plugin::WorkspaceMemory memory{&fake_allocate, &fake_free, &fake_record};
  flagos::plugin::lend_workspace_memory(&memory);
  const flagos_host_services_t* s = host_services("vendor_lent");
  void* ptr = nullptr;
  REQUIRE(FLAGOS_HAS_FN(flagos_host_services_t, s, workspace_alloc));
  CHECK(s->workspace_alloc(s->context, 0, nullptr, 64, &ptr) == FLAGOS_SUCCESS);
  CHECK(ptr != nullptr);
  CHECK(s->workspace_free(s->context, ptr) == FLAGOS_SUCCESS);
  CHECK(s->workspace_free(s->context, nullptr) == FLAGOS_SUCCESS);  // a no-op
  CHECK(g_frees == 1);
  {
    flagos::test::CapturedLog log;
    CHECK(s->workspace_alloc(s->context, 2, nullptr, 4096, &ptr) == FLAGOS_ERROR_OUT_OF_MEMORY);
    CHECK(s->workspace_alloc(s->context, 2, nullptr, 4096, &ptr) == FLAGOS_ERROR_OUT_OF_MEMORY);  // not logged again
    CHECK(s->record_stream(s->context, ptr, nullptr) == FLAGOS_ERROR_INVALID_ARGUMENT);
    CHECK(s->workspace_alloc(s->context, 0, nullptr, 64, nullptr) == FLAGOS_ERROR_INVALID_ARGUMENT);
    CHECK(log.text() ==
          "[flagos] plugin vendor_lent: host service workspace_alloc: out of memory on device 2 "
          "(later out-of-memory failures are not logged)\n"
          "[flagos] plugin vendor_lent: host service record_stream: the address is in no live block\n"
          "[flagos] plugin vendor_lent: host service workspace_alloc: ptr is NULL\n");
  }
  flagos::plugin::lend_workspace_memory(nullptr);
  {
    flagos::test::CapturedLog log;
    CHECK(s->workspace_alloc(s->context, 0, nullptr, 64, &ptr) == FLAGOS_ERROR_UNSUPPORTED);
    CHECK(log.text() ==
          "[flagos] plugin vendor_lent: host service workspace_alloc: this host lends no device memory\n");
  }
}
