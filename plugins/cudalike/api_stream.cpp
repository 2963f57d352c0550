#include <memory>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "handles.h"
#include "tracer.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::need;

// The runtime stream behind a handle, or nullptr for a default stream nothing
// was ever enqueued on (so nothing can be pending, and no context is created).
flagos_status_t used_stream(const char* fn, flagos_stream_t handle, rt_stream* out) {
  std::shared_ptr<Stream> s;
  flagos_status_t st = streams().find(fn, handle, &s);
  if (st != FLAGOS_SUCCESS) return st;
  *out = s->existing();
  return *out == nullptr ? FLAGOS_SUCCESS : runtime_ready(fn);
}

}  // namespace

flagos_status_t Plugin::get_default_stream(flagos_device_t device, flagos_stream_t* stream) {
  static const char* fn = "get_default_stream";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, stream, "stream");
    if (st == FLAGOS_SUCCESS) *stream = default_stream(device);
    return st;
  });
}

flagos_status_t Plugin::stream_create(flagos_device_t device, int32_t priority, flagos_stream_t* stream) {
  static const char* fn = "stream_create";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, stream, "stream");
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    const int32_t clamped = clamp_priority(device, priority);
    rt_stream s = nullptr;
    int err = rt().stream_create_with_priority(&s, vendor().stream_non_blocking, clamped);
    if (err != 0)
      return rt_fail(fn, err, "StreamCreateWithPriority(priority %d) on device %d", clamped, device);
    *stream = streams().add(std::make_shared<Stream>(device, s));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::stream_destroy(flagos_stream_t stream) {
  static const char* fn = "stream_destroy";
  return guarded(fn, [&] {
    if (stream == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Stream> s;
    flagos_status_t st = take_stream(fn, stream, &s);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, s->device());
    if (st != FLAGOS_SUCCESS) return st;
    tracer_forget_stream(stream, *s);  // its records, if a profile runs, still name it
    // Pending work still runs; the runtime releases the stream once it is done.
    int err = rt().stream_destroy(s->existing());
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "StreamDestroy");
  });
}

flagos_status_t Plugin::stream_query(flagos_stream_t stream) {
  static const char* fn = "stream_query";
  return guarded(fn, [&] {
    rt_stream s = nullptr;
    flagos_status_t st = used_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS || s == nullptr) return st;
    int err = rt().stream_query(s);
    st = status_of(err);
    return st == FLAGOS_SUCCESS || st == FLAGOS_NOT_READY ? st : rt_fail(fn, err, "StreamQuery");
  });
}

flagos_status_t Plugin::stream_synchronize(flagos_stream_t stream) {
  static const char* fn = "stream_synchronize";
  return guarded(fn, [&] {
    rt_stream s = nullptr;
    flagos_status_t st = used_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS || s == nullptr) return st;
    int err = rt().stream_synchronize(s);
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "StreamSynchronize");
  });
}

flagos_status_t Plugin::stream_wait_event(flagos_stream_t stream, flagos_event_t event) {
  static const char* fn = "stream_wait_event";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    std::shared_ptr<Event> e;
    flagos_status_t st = streams().find(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = events().find(fn, event, &e);
    if (st != FLAGOS_SUCCESS || !e->recorded.load()) return st;  // never recorded: no wait
    DeviceScope scope;
    rt_stream native = nullptr;
    if ((st = s->enter(fn, scope, &native)) != FLAGOS_SUCCESS) return st;
    int err = rt().stream_wait_event(native, e->event, 0);  // events of any device
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "StreamWaitEvent");
  });
}

flagos_status_t Plugin::stream_native_handle(flagos_stream_t stream, void** native) {
  static const char* fn = "stream_native_handle";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    DeviceScope scope;
    rt_stream handle = nullptr;
    flagos_status_t st = streams().find(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = need(fn, native, "native");
    // The runtime stream must exist to be handed out: a default stream is made now.
    if (st == FLAGOS_SUCCESS) st = s->enter(fn, scope, &handle);
    if (st != FLAGOS_SUCCESS) return st;
    *native = handle;
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_cudalike
