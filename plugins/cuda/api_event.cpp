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

// Looks the event up and checks that CUDA may be called here.
flagos_status_t usable_event(const char* fn, flagos_event_t handle, std::shared_ptr<Event>* out) {
  flagos_status_t st = find_event(fn, handle, out);
  return st == FLAGOS_SUCCESS ? runtime_ready(fn) : st;
}

// The INVALID_STATE cases of event_elapsed_ms, which CUDA does not separate.
flagos_status_t check_timeable(const char* fn, const char* which, const Event& e) {
  if (!e.timing)
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s event %p was created without FLAGOS_EVENT_TIMING",
                fn, which, static_cast<const void*>(&e));
  if (!e.recorded.load())
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s event %p was never recorded", fn, which,
                static_cast<const void*>(&e));
  return FLAGOS_SUCCESS;
}

}  // namespace

flagos_status_t api_event_create(flagos_device_t device, uint32_t flags, flagos_event_t* event) {
  static const char* fn = "event_create";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, event, "event");
    if (st == FLAGOS_SUCCESS && (flags & ~FLAGOS_EVENT_TIMING) != 0)
      st = fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, flags);
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    const bool timing = (flags & FLAGOS_EVENT_TIMING) != 0;
    cudaEvent_t ce = nullptr;
    cudaError_t err = cudaEventCreateWithFlags(&ce, timing ? cudaEventDefault : cudaEventDisableTiming);
    if (err != cudaSuccess) return cuda_fail(fn, err, "cudaEventCreateWithFlags on device %d", device);
    *event = add_event(std::make_shared<Event>(device, timing, ce));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_event_destroy(flagos_event_t event) {
  static const char* fn = "event_destroy";
  return guarded(fn, [&] {
    if (event == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Event> e;
    flagos_status_t st = take_event(fn, event, &e);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, e->device);
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaEventDestroy(e->event);  // legal with the recorded work pending
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaEventDestroy");
  });
}

flagos_status_t api_event_record(flagos_event_t event, flagos_stream_t stream) {
  static const char* fn = "event_record";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_event(fn, event, &e);
    if (st == FLAGOS_SUCCESS) st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != e->device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, event %p on device %d",
                  fn, static_cast<void*>(stream), s->device(), static_cast<void*>(event), e->device);
    DeviceScope scope;
    cudaStream_t cs = nullptr;
    if ((st = s->enter(fn, scope, &cs)) != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaEventRecord(e->event, cs);
    if (err != cudaSuccess) return cuda_fail(fn, err, "cudaEventRecord on device %d", e->device);
    e->recorded.store(true);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_event_query(flagos_event_t event) {
  static const char* fn = "event_query";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    flagos_status_t st = usable_event(fn, event, &e);
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaEventQuery(e->event);  // success for a never-recorded event
    if (err == cudaErrorNotReady) return FLAGOS_NOT_READY;
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaEventQuery");
  });
}

flagos_status_t api_event_synchronize(flagos_event_t event) {
  static const char* fn = "event_synchronize";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    flagos_status_t st = usable_event(fn, event, &e);
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaEventSynchronize(e->event);
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaEventSynchronize");
  });
}

flagos_status_t api_event_elapsed_ms(flagos_event_t start, flagos_event_t end, float* milliseconds) {
  static const char* fn = "event_elapsed_ms";
  return guarded(fn, [&] {
    std::shared_ptr<Event> a, b;
    flagos_status_t st = usable_event(fn, start, &a);
    if (st == FLAGOS_SUCCESS) st = usable_event(fn, end, &b);
    if (st == FLAGOS_SUCCESS) st = need(fn, milliseconds, "milliseconds");
    if (st == FLAGOS_SUCCESS) st = check_timeable(fn, "start", *a);
    if (st == FLAGOS_SUCCESS) st = check_timeable(fn, "end", *b);
    if (st != FLAGOS_SUCCESS) return st;
    float ms = 0.0f;
    cudaError_t err = cudaEventElapsedTime(&ms, a->event, b->event);
    if (err == cudaErrorNotReady) return FLAGOS_NOT_READY;
    if (err != cudaSuccess) return cuda_fail(fn, err, "cudaEventElapsedTime");
    *milliseconds = ms;
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_cuda
