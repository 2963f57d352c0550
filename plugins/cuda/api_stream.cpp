#include <cuda_runtime_api.h>

#include <memory>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "fork_guard.h"
#include "handles.h"

namespace flagos_cuda {
namespace {

// The CUDA stream behind a handle, or nullptr for a default stream nothing was
// ever enqueued on (so nothing can be pending, and no context is created).
flagos_status_t used_stream(const char* fn, flagos_stream_t handle, cudaStream_t* out) {
  std::shared_ptr<Stream> s;
  flagos_status_t st = find_stream(fn, handle, &s);
  if (st != FLAGOS_SUCCESS) return st;
  *out = s->existing();
  return *out == nullptr ? FLAGOS_SUCCESS : runtime_ready(fn);
}

}  // namespace

flagos_status_t api_get_default_stream(flagos_device_t device, flagos_stream_t* stream) {
  static const char* fn = "get_default_stream";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, stream, "stream");
    if (st == FLAGOS_SUCCESS) *stream = default_stream(device);
    return st;
  });
}

flagos_status_t api_stream_create(flagos_device_t device, int32_t priority, flagos_stream_t* stream) {
  static const char* fn = "stream_create";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, stream, "stream");
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    int32_t clamped = clamp_priority(device, priority);
    cudaStream_t cs = nullptr;
    cudaError_t err = cudaStreamCreateWithPriority(&cs, cudaStreamNonBlocking, clamped);
    if (err != cudaSuccess)
      return cuda_fail(fn, err, "cudaStreamCreateWithPriority(priority %d) on device %d", clamped, device);
    *stream = add_stream(std::make_shared<Stream>(device, cs));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_stream_destroy(flagos_stream_t stream) {
  static const char* fn = "stream_destroy";
  return guarded(fn, [&] {
    if (stream == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Stream> s;
    flagos_status_t st = take_stream(fn, stream, &s);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, s->device());
    if (st != FLAGOS_SUCCESS) return st;
    // Pending work still runs; CUDA releases the stream once it is done.
    cudaError_t err = cudaStreamDestroy(s->existing());
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaStreamDestroy");
  });
}

flagos_status_t api_stream_query(flagos_stream_t stream) {
  static const char* fn = "stream_query";
  return guarded(fn, [&] {
    cudaStream_t cs = nullptr;
    flagos_status_t st = used_stream(fn, stream, &cs);
    if (st != FLAGOS_SUCCESS || cs == nullptr) return st;
    cudaError_t err = cudaStreamQuery(cs);
    return err == cudaErrorNotReady ? FLAGOS_NOT_READY
           : err == cudaSuccess     ? FLAGOS_SUCCESS
                                    : cuda_fail(fn, err, "cudaStreamQuery");
  });
}

flagos_status_t api_stream_synchronize(flagos_stream_t stream) {
  static const char* fn = "stream_synchronize";
  return guarded(fn, [&] {
    cudaStream_t cs = nullptr;
    flagos_status_t st = used_stream(fn, stream, &cs);
    if (st != FLAGOS_SUCCESS || cs == nullptr) return st;
    cudaError_t err = cudaStreamSynchronize(cs);
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaStreamSynchronize");
  });
}

flagos_status_t api_stream_wait_event(flagos_stream_t stream, flagos_event_t event) {
  static const char* fn = "stream_wait_event";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    std::shared_ptr<Event> e;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = find_event(fn, event, &e);
    if (st != FLAGOS_SUCCESS || !e->recorded.load()) return st;  // never recorded: no wait
    DeviceScope scope;
    cudaStream_t cs = nullptr;
    if ((st = s->enter(fn, scope, &cs)) != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaStreamWaitEvent(cs, e->event, 0);  // events of any device
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaStreamWaitEvent");
  });
}

flagos_status_t api_stream_native_handle(flagos_stream_t stream, void** native) {
  static const char* fn = "stream_native_handle";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    DeviceScope scope;
    cudaStream_t cs = nullptr;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = need(fn, native, "native");
    // The cudaStream_t must exist to be handed out: a default stream is made now.
    if (st == FLAGOS_SUCCESS) st = s->enter(fn, scope, &cs);
    if (st != FLAGOS_SUCCESS) return st;
    *native = cs;
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_cuda
