// FLAGOS_EXTENSION_TESTING: stream_enqueue_delay as a runtime host function
// that sleeps. The stream runs nothing after it until it returns, which is
// what the conformance runner needs to observe NOT_READY, ordering and timing.
// Absent (no extension) when the runtime has no LaunchHostFunc.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "api.h"
#include "device_scope.h"
#include "errors.h"
#include "handles.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

// About 12 days: keeps the duration far from overflow.
constexpr uint64_t kMaxDelayUs = uint64_t{1} << 40;

// Runs on a runtime thread; must not call the runtime. The delay travels in
// the pointer itself, so nothing is allocated or freed.
void sleep_on_stream(void* microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(reinterpret_cast<uintptr_t>(microseconds)));
}

flagos_status_t stream_enqueue_delay(flagos_stream_t stream, uint64_t microseconds) {
  static const char* fn = "stream_enqueue_delay";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = streams().find(fn, stream, &s);
    DeviceScope scope;
    rt_stream native = nullptr;
    if (st == FLAGOS_SUCCESS) st = s->enter(fn, scope, &native);
    if (st != FLAGOS_SUCCESS) return st;
    if (rt().launch_host_func == nullptr)
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: the runtime has no LaunchHostFunc", fn);
    void* us = reinterpret_cast<void*>(static_cast<uintptr_t>(std::min(microseconds, kMaxDelayUs)));
    int err = rt().launch_host_func(native, sleep_on_stream, us);
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "LaunchHostFunc");
  });
}

}  // namespace

const flagos_extension_t* testing_extension() {
  if (vendor().synchronous) return nullptr;  // a delay would block the caller
  static const flagos_testing_ext_t ext = {
      {sizeof(flagos_testing_ext_t), FLAGOS_EXTENSION_TESTING, FLAGOS_TESTING_EXT_VERSION, nullptr},
      stream_enqueue_delay};
  return &ext.base;
}

}  // namespace flagos_cudalike
