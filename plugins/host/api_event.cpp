#include "api.h"
#include "capture.h"
#include "devices.h"
#include "flagos/kit/fork_guard.hpp"
#include "handles.h"
#include "kit.h"

namespace flagos_host {
namespace {

// Looks up the event and checks that the plugin may still wait on workers.
flagos_status_t usable_event(const char* fn, flagos_event_t h, std::shared_ptr<Event>* out) {
  flagos_status_t st = find_event(fn, h, out);
  return st != FLAGOS_SUCCESS ? st : kit::fork_guard().check(fn);
}

// event_query and event_synchronize: an event recorded in a capture still
// underway has no point in any stream to look at; asking breaks the capture.
flagos_status_t observable_event(const char* fn, flagos_event_t h, std::shared_ptr<Event>* out) {
  flagos_status_t st = usable_event(fn, h, out);
  if (st != FLAGOS_SUCCESS) return st;
  if (std::shared_ptr<Capture> c = (*out)->capture_underway())
    return c->invalidate(fn, "waiting on or querying an event recorded in the capture");
  return FLAGOS_SUCCESS;
}

// The outcome of a completed marker, as a status with message.
flagos_status_t marker_result(const char* fn, flagos_event_t h, Marker& m) {
  flagos_status_t st = m.status();
  if (st == FLAGOS_SUCCESS) return st;
  return fail(st, "%s: the work captured by event %p failed (%s)", fn, (void*)h,
              flagos_status_name(st));
}

}  // namespace

flagos_status_t HostPlugin::event_create(flagos_device_t device, uint32_t flags,
                                         flagos_event_t* event) {
  static const char* fn = "event_create";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, event, "event");
    if (st == FLAGOS_SUCCESS) st = kit::check_event_flags(fn, flags);
    if (st != FLAGOS_SUCCESS) return st;
    *event = add_event(std::make_shared<Event>(device, flags));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t HostPlugin::event_destroy(flagos_event_t event) {
  return guarded("event_destroy", [&] {
    // Pending records keep their markers alive; the event itself can go now.
    return event == nullptr ? FLAGOS_SUCCESS : remove_event("event_destroy", event);
  });
}

flagos_status_t HostPlugin::event_record(flagos_event_t event, flagos_stream_t stream) {
  static const char* fn = "event_record";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    std::shared_ptr<Stream> s;
    flagos_status_t st = usable_event(fn, event, &e);
    if (st == FLAGOS_SUCCESS) st = find_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    if (s->device() != e->device())
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: stream %p is on device %d, event %p on device %d", fn, (void*)stream,
                  s->device(), (void*)event, e->device());
    std::shared_ptr<Marker> m = e->next_marker();
    Stream* raw = s.get();  // the worker running the task keeps the stream alive
    bool captured = false;
    Task task = [m, raw] {
      m->complete(raw->error_status());
      return FLAGOS_SUCCESS;
    };
    st = s->enqueue_record(fn, e, std::move(task), &captured);
    if (st == FLAGOS_SUCCESS && !captured) e->publish(std::move(m));
    return st;
  });
}

flagos_status_t HostPlugin::event_query(flagos_event_t event) {
  static const char* fn = "event_query";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    flagos_status_t st = observable_event(fn, event, &e);
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Marker> m = e->latest();
    if (!m) return FLAGOS_SUCCESS;  // never recorded: nothing to wait for
    return m->done() ? marker_result(fn, event, *m) : FLAGOS_NOT_READY;
  });
}

flagos_status_t HostPlugin::event_synchronize(flagos_event_t event) {
  static const char* fn = "event_synchronize";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e;
    flagos_status_t st = observable_event(fn, event, &e);
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Marker> m = e->latest();
    if (!m) return FLAGOS_SUCCESS;
    m->wait();
    return marker_result(fn, event, *m);
  });
}

flagos_status_t HostPlugin::event_elapsed_ms(flagos_event_t start, flagos_event_t end,
                                             float* milliseconds) {
  static const char* fn = "event_elapsed_ms";
  return guarded(fn, [&] {
    std::shared_ptr<Event> e[2];
    flagos_status_t st = usable_event(fn, start, &e[0]);
    if (st == FLAGOS_SUCCESS) st = usable_event(fn, end, &e[1]);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, milliseconds, "milliseconds");
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Marker> m[2];
    for (int i = 0; i < 2; ++i) {
      const char* which = i == 0 ? "start" : "end";
      if (!e[i]->timing())
        return fail(FLAGOS_ERROR_INVALID_STATE,
                    "%s: %s event %p was created without FLAGOS_EVENT_TIMING", fn, which,
                    (void*)e[i].get());
      if (!(m[i] = e[i]->latest()))
        return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s event %p was never recorded", fn, which,
                    (void*)e[i].get());
    }
    if (!m[0]->done() || !m[1]->done()) return FLAGOS_NOT_READY;
    std::chrono::duration<float, std::milli> d = m[1]->when() - m[0]->when();
    *milliseconds = d.count();
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_host
