// FLAGOS_EXTENSION_TESTING: hooks for the conformance runner.
#include <algorithm>
#include <chrono>
#include <thread>

#include "api.h"
#include "handles.h"
#include "kit.h"

namespace flagos_host {
namespace {

// Keeps the duration arithmetic far from overflow (about 12 days).
constexpr uint64_t kMaxDelayUs = uint64_t{1} << 40;

flagos_status_t api_stream_enqueue_delay(flagos_stream_t stream, uint64_t microseconds) {
  static const char* fn = "stream_enqueue_delay";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    std::chrono::microseconds pause(std::min(microseconds, kMaxDelayUs));
    return s->enqueue(fn, [pause] {
      std::this_thread::sleep_for(pause);
      return FLAGOS_SUCCESS;
    });
  });
}

flagos_testing_ext_t make_testing_ext() {
  flagos_testing_ext_t ext{};
  ext.base.struct_size = sizeof(flagos_testing_ext_t);
  ext.base.type = FLAGOS_EXTENSION_TESTING;
  ext.base.version = FLAGOS_TESTING_EXT_VERSION;
  ext.base.next = nullptr;
  ext.stream_enqueue_delay = api_stream_enqueue_delay;
  return ext;
}

}  // namespace

const flagos_extension_t* testing_extension() {
  static const flagos_testing_ext_t ext = make_testing_ext();
  return &ext.base;
}

}  // namespace flagos_host
