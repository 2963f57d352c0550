#include <memory>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "handles.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::need;

// Looks the event up and checks that the runtime may be called here.
flagos_status_t usable_event(const char* fn, flagos_event_t handle, std::shared_ptr<Event>* out) {
  flagos_status_t st = events().find(fn, handle, out);
  return st == FLAGOS_SUCCESS ? runtime_ready(fn) : st;
}

// The INVALID_STATE cases of event_elapsed_ms, which the runtime does not separate.
flagos_status_t check_timeable(const char* fn, const char* which, const Event& e) {
  if (!e.timing)
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s event %p was created without FLAGOS_EVENT_TIMING", fn,
                which, static_cast<const void*>(&e));
  if (!e.recorded.load())
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s event %p was never recorded", fn, which,
                static_cast<const void*>(&e));
  return FLAGOS_SUCCESS;
}

// SUCCESS, NOT_READY, or the failure with its message.
flagos_status_t query_result(const char* fn, int err, const char* call) {
  const flagos_status_t st = status_of(err);
  return st == FLAGOS_SUCCESS || st == FLAGOS_NOT_READY ? st : rt_fail(fn, err, "%s", call);
}

}  // namespace

flagos_status_t Plugin::event_create(flagos_device_t device, uint32_t flags, flagos_event_t* event) {
  static const char* fn = "event_create";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, event, "event");
    if (st == FLAGOS_SUCCESS) st = flagos::kit::check_event_flags(fn, flags);
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    const bool timing = (flags & FLAGOS_EVENT_TIMING) != 0;
    rt_event e = nullptr;
    int err = rt().event_create_with_flags(&e, timing ? 0u : vendor().event_disable_timing);
    if (err != 0) return rt_fail(fn, err, "EventCreateWithFlags on device %d", device);
    *event = events().add(std::make_shared<Event>(device, timing, e));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::event_destroy(flagos_event_t event) {
  static const char* fn = "event_destroy";
  return guarded(fn, [&] {
    if (event == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Event> e;
    flagos_status_t st = events().take(fn, event, &e);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, e->device);
    if (st != FLAGOS_SUCCESS) return st;
    int err = rt().event_destroy(e->event);  // legal with the recorded work pending
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "EventDestroy");
  });
}

flagos_status_t Plugin::event_record(flagos_event_t event, flagos_stream_t stream) {
  static const char* fn = "event_record";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    std::shared_ptr<Stream> s;
    flagos_status_t st = events().find(fn, event, &e);
    if (st == FLAGOS_SUCCESS) st = streams().find(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != e->device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, event %p on device %d", fn,
                  static_cast<void*>(stream), s->device(), static_cast<void*>(event), e->device);
    DeviceScope scope;
    rt_stream native = nullptr;
    if ((st = s->enter(fn, scope, &native)) != FLAGOS_SUCCESS) return st;
    int err = rt().event_record(e->event, native);
    if (err != 0) return rt_fail(fn, err, "EventRecord on device %d", e->device);
    e->recorded.store(true);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::event_query(flagos_event_t event) {
  static const char* fn = "event_query";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    flagos_status_t st = usable_event(fn, event, &e);
    // Success for a never-recorded event, as the runtime's own query.
    return st != FLAGOS_SUCCESS ? st : query_result(fn, rt().event_query(e->event), "EventQuery");
  });
}

flagos_status_t Plugin::event_synchronize(flagos_event_t event) {
  static const char* fn = "event_synchronize";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    flagos_status_t st = usable_event(fn, event, &e);
    if (st != FLAGOS_SUCCESS) return st;
    int err = rt().event_synchronize(e->event);
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "EventSynchronize");
  });
}

flagos_status_t Plugin::event_elapsed_ms(flagos_event_t start, flagos_event_t end, float* milliseconds) {
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
    st = query_result(fn, rt().event_elapsed_time(&ms, a->event, b->event), "EventElapsedTime");
    if (st == FLAGOS_SUCCESS) *milliseconds = ms;
    return st;
  });
}

}  // namespace flagos_cudalike
