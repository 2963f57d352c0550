#include "api.h"
#include "capture.h"
#include "devices.h"
#include "flagos/kit/fork_guard.hpp"
#include "handles.h"
#include "kit.h"

namespace flagos_host {

flagos_status_t HostPlugin::get_default_stream(flagos_device_t device, flagos_stream_t* stream) {
  static const char* fn = "get_default_stream";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, stream, "stream");
    if (st != FLAGOS_SUCCESS) return st;
    *stream = to_handle(default_stream(device).get());
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t HostPlugin::stream_create(flagos_device_t device, int32_t priority,
                                          flagos_stream_t* stream) {
  static const char* fn = "stream_create";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, stream, "stream");
    if (st != FLAGOS_SUCCESS) return st;
    // No worker yet: it starts with the first piece of work.
    auto s = std::make_shared<Stream>(device, clamp_priority(priority), /*is_default=*/false);
    *stream = add_stream(std::move(s));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t HostPlugin::stream_destroy(flagos_stream_t stream) {
  static const char* fn = "stream_destroy";
  return guarded(fn, [&] {
    if (stream == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Stream> s;
    flagos_status_t st = remove_stream(fn, stream, &s);
    if (st != FLAGOS_SUCCESS) return st;
    // After fork() a dead parent worker may have left the stream's lock held:
    // forget the stream without touching it.
    if (kit::fork_guard().check(fn) != FLAGOS_SUCCESS) {
      new std::shared_ptr<Stream>(std::move(s));  // leaked on purpose
      return FLAGOS_SUCCESS;
    }
    s->close();  // pending work still runs; the worker then releases the stream
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t HostPlugin::stream_query(flagos_stream_t stream) {
  static const char* fn = "stream_query";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    return st != FLAGOS_SUCCESS ? st : s->query(fn);
  });
}

flagos_status_t HostPlugin::stream_synchronize(flagos_stream_t stream) {
  static const char* fn = "stream_synchronize";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    flagos_status_t st = find_stream(fn, stream, &s);
    return st != FLAGOS_SUCCESS ? st : s->synchronize(fn);
  });
}

flagos_status_t HostPlugin::stream_wait_event(flagos_stream_t stream, flagos_event_t event) {
  static const char* fn = "stream_wait_event";
  return guarded(fn, [&] {
    std::shared_ptr<Stream> s;
    std::shared_ptr<Event> e;
    flagos_status_t st = find_stream(fn, stream, &s);
    if (st == FLAGOS_SUCCESS) st = find_event(fn, event, &e);
    if (st == FLAGOS_SUCCESS) st = kit::fork_guard().check(fn);
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Capture> recorded_in = e->capture_underway();
    std::shared_ptr<Capture> capturing = s->capture();
    if (recorded_in && recorded_in != capturing)
      return recorded_in->invalidate(
          fn, "another stream waiting on an event recorded in the capture (multi-stream "
              "capture; the host plugin captures one stream)");
    if (recorded_in) return FLAGOS_SUCCESS;  // same capture, same stream: already ordered
    std::shared_ptr<Marker> m = e->latest();  // the record captured now, not a later one
    if (!m || m->done()) return FLAGOS_SUCCESS;  // nothing to wait for
    if (capturing)
      return capturing->invalidate(fn, "waiting on an event still pending from outside the capture");
    return s->enqueue(fn, [m] {
      m->wait();
      return FLAGOS_SUCCESS;
    });
  });
}

}  // namespace flagos_host
