// Events: a record is a point (stream, sequence) plus the time the worker
// reached it.
#include <chrono>

#include "api.h"
#include "call.h"
#include "ordering.h"

namespace simrt {
namespace {

std::shared_ptr<Point> recorded(Event& e) {
  std::lock_guard<std::mutex> lock(e.mu);
  return e.recorded;
}

}  // namespace

int event_create(const Vendor& v, const char* sym, void** event, unsigned flags) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (event == nullptr) return c.rule(Err::InvalidValue, "event is NULL");
  if (flags & ~v.event_flags_mask)
    return c.rule(Err::InvalidValue, "flags 0x%x are not valid event flags (mask 0x%x)", flags, v.event_flags_mask);
  // CUDA and HIP document it: an interprocess event cannot record timing.
  if ((flags & v.event_interprocess) && !(flags & v.event_disable_timing))
    return c.rule(Err::InvalidValue, "flags 0x%x: Interprocess (0x%x) needs DisableTiming (0x%x)", flags,
                  v.event_interprocess, v.event_disable_timing);
  int err, d = c.current_device();
  if (c.bad_device(d, &err)) return err;
  c.touch(d);
  auto e = std::make_shared<Event>();
  e->flags = flags;
  e->device = d;  // an event belongs to the device current at creation
  *event = c.rt.add_event(std::move(e));
  return c.ok();
}

int event_record(const Vendor& v, const char* sym, void* event, void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  std::shared_ptr<Event> e = c.rt.find_event(event);
  if (!e) return c.rule(Err::InvalidResourceHandle, "event %p is not a live event", event);
  int err = 0;
  std::shared_ptr<Stream> s = resolve_stream(c, stream, &err);
  if (!s) return err;
  if (s->device != e->device)  // cuEventRecord: "must be from the same context"
    return c.rule(Err::InvalidResourceHandle, "event of device %d recorded on a stream of device %d", e->device,
                  s->device);
  auto p = std::make_shared<Point>();
  p->stream = s;
  // Published under the event's lock after the sequence is known; the worker
  // only writes p->when.
  std::lock_guard<std::mutex> lock(e->mu);
  p->seq = enqueue_ordered(c.rt, s, nullptr, {}, p);
  e->recorded = p;
  return c.ok();
}

int event_query(const Vendor& v, const char* sym, void* event) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  std::shared_ptr<Event> e = c.rt.find_event(event);
  if (!e) return c.rule(Err::InvalidResourceHandle, "event %p is not a live event", event);
  std::shared_ptr<Point> p = recorded(*e);
  return p == nullptr || p->stream->done(p->seq) ? c.ok() : c.code(Err::NotReady);
}

int event_synchronize(const Vendor& v, const char* sym, void* event) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  std::shared_ptr<Event> e = c.rt.find_event(event);
  if (!e) return c.rule(Err::InvalidResourceHandle, "event %p is not a live event", event);
  if (std::shared_ptr<Point> p = recorded(*e)) p->stream->wait(p->seq);
  return c.ok();
}

int event_destroy(const Vendor& v, const char* sym, void* event) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  // A pending record is fine: the point keeps its stream alive.
  if (!c.rt.take_event(event)) return c.rule(Err::InvalidResourceHandle, "event %p is not a live event", event);
  return c.ok();
}

int event_elapsed_time(const Vendor& v, const char* sym, float* ms, void* start, void* end) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (ms == nullptr) return c.rule(Err::InvalidValue, "ms is NULL");
  std::shared_ptr<Event> e0 = c.rt.find_event(start), e1 = c.rt.find_event(end);
  if (!e0 || !e1) return c.rule(Err::InvalidResourceHandle, "start or end is not a live event");
  if ((e0->flags | e1->flags) & v.event_disable_timing)
    return c.rule(Err::InvalidResourceHandle, "an event created with DisableTiming (0x%x) cannot be timed",
                  v.event_disable_timing);
  std::shared_ptr<Point> p0 = recorded(*e0), p1 = recorded(*e1);
  if (!p0 || !p1) return c.rule(Err::InvalidResourceHandle, "start or end was never recorded");
  if (!p0->stream->done(p0->seq) || !p1->stream->done(p1->seq)) return c.code(Err::NotReady);
  *ms = std::chrono::duration<float, std::milli>(p1->when - p0->when).count();
  return c.ok();
}

}  // namespace simrt
