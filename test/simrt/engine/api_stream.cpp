// Streams, cross-stream waits and host functions.
#include <algorithm>

#include "api.h"
#include "call.h"
#include "ordering.h"
#include "runtime.h"

namespace simrt {

int stream_create(const Vendor& v, const char* sym, void** stream, unsigned flags, int priority) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (stream == nullptr) return c.rule(Err::InvalidValue, "pStream is NULL");
  if (flags & ~v.stream_flags_mask)
    return c.rule(Err::InvalidValue, "flags 0x%x are not valid stream flags (mask 0x%x)", flags, v.stream_flags_mask);
  int err, d = c.current_device();
  if (c.bad_device(d, &err)) return err;
  c.touch(d);
  // Out-of-range priorities are clamped, as CUDA documents ("greatest" is the
  // numerically lowest).
  priority = std::min(std::max(priority, v.priority_greatest), v.priority_least);
  auto s = c.rt.new_stream(d, priority, flags, (flags & v.stream_non_blocking) != 0);
  *stream = c.rt.add_stream(std::move(s));
  return c.ok();
}

int stream_destroy(const Vendor& v, const char* sym, void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  std::shared_ptr<Stream> s = c.rt.take_stream(stream);
  if (!s) return c.rule(Err::InvalidResourceHandle, "stream %p is not a live stream (NULL cannot be destroyed)", stream);
  s->close();  // legal with pending work: it completes, then the worker lets go
  return c.ok();
}

int stream_query(const Vendor& v, const char* sym, void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  int err = 0;
  std::shared_ptr<Stream> s = resolve_stream(c, stream, &err);
  if (!s) return err;
  // NotReady is a status, not an error: it does not become the last error.
  return s->idle() ? c.ok() : c.code(Err::NotReady);
}

int stream_synchronize(const Vendor& v, const char* sym, void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  int err = 0;
  std::shared_ptr<Stream> s = resolve_stream(c, stream, &err);
  if (!s) return err;
  s->wait_all();
  return c.ok();
}

int stream_wait_event(const Vendor& v, const char* sym, void* stream, void* event, unsigned flags) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (flags != 0) return c.rule(Err::InvalidValue, "flags must be 0, got %u", flags);
  int err = 0;
  std::shared_ptr<Stream> s = resolve_stream(c, stream, &err);
  if (!s) return err;
  std::shared_ptr<Event> e = c.rt.find_event(event);
  if (!e) return c.rule(Err::InvalidResourceHandle, "event %p is not a live event", event);
  std::shared_ptr<Point> p;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    p = e->recorded;
  }
  if (!p) return c.ok();  // never recorded: no wait (events of any device may be waited on)
  std::vector<Dep> deps;
  if (p->stream != s && !p->stream->done(p->seq)) deps.push_back(Dep{p->stream, p->seq});
  enqueue_ordered(c.rt, s, nullptr, std::move(deps));
  return c.ok();
}

int launch_host_func(const Vendor& v, const char* sym, void* stream, HostFn fn, void* user) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  if (fn == nullptr) return c.rule(Err::InvalidValue, "fn is NULL");
  int err = 0;
  std::shared_ptr<Stream> s = resolve_stream(c, stream, &err);
  if (!s) return err;
  enqueue_ordered(c.rt, s, [fn, user] {
    set_in_host_callback(true);  // runtime calls from here return NotPermitted
    fn(user);
    set_in_host_callback(false);
  });
  return c.ok();
}

}  // namespace simrt
