// FLAGOS_EXTENSION_TESTING: stream_enqueue_delay as a CUDA host function that
// sleeps. The stream runs nothing after it until it returns, which is what
// the conformance runner needs to observe NOT_READY, ordering and timing.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "api.h"
#include "device_scope.h"
#include "errors.h"
#include "handles.h"

namespace flagos_cuda {
namespace {

// About 12 days: keeps the duration far from overflow.
constexpr uint64_t kMaxDelayUs = uint64_t{1} << 40;

// Runs on a CUDA runtime thread; must not call CUDA. The delay travels in the
// pointer itself, so nothing is allocated or freed.
void CUDART_CB sleep_on_stream(void* microseconds) {
  std::this_thread::sleep_for(std::chrono::microseconds(reinterpret_cast<uintptr_t>(microseconds)));
}

flagos_status_t api_stream_enqueue_delay(flagos_stream_t stream, uint64_t microseconds) {
  static const char* fn = "stream_enqueue_delay";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    DeviceScope scope;
    cudaStream_t cs = nullptr;
    if (st == FLAGOS_SUCCESS) st = s->enter(fn, scope, &cs);
    if (st != FLAGOS_SUCCESS) return st;
    void* us = reinterpret_cast<void*>(static_cast<uintptr_t>(std::min(microseconds, kMaxDelayUs)));
    cudaError_t err = cudaLaunchHostFunc(cs, sleep_on_stream, us);
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaLaunchHostFunc");
  });
}

}  // namespace

const flagos_extension_t* testing_extension() {
  static const flagos_testing_ext_t ext = {
      {sizeof(flagos_testing_ext_t), FLAGOS_EXTENSION_TESTING, FLAGOS_TESTING_EXT_VERSION, nullptr},
      api_stream_enqueue_delay};
  return &ext.base;
}

}  // namespace flagos_cuda
