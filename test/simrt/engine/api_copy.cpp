// Copies and memset, with the vendor's memcpy-kind rules and CUDA's
// documented host-synchronisation behaviour for each kind of host memory.
#include <cstring>
#include <memory>
#include <vector>

#include "api.h"
#include "call.h"
#include "observer.h"
#include "ordering.h"

namespace simrt {
namespace {

bool is_host(const Span& s) { return s.kind == Span::Pageable || s.kind == Span::Pinned; }
const char* where(const Span& s) {
  return s.kind == Span::Device ? "device memory" : s.kind == Span::Pinned ? "pinned host memory" : "pageable host memory";
}

// Checks the kind against the vendor's range and against where the pointers
// are. Returns 0 and fills the spans, or the code to return.
int check_copy(Call& c, void* dst, const void* src, size_t n, int kind, Span* d, Span* s) {
  const Vendor& v = c.v;
  int hi = v.kind_default >= 0 ? v.kind_default : v.kind_d2d;
  bool known = kind == v.kind_h2h || kind == v.kind_h2d || kind == v.kind_d2h || kind == v.kind_d2d ||
               (v.kind_default >= 0 && kind == v.kind_default);
  if (!known)
    return c.rule(Err::InvalidMemcpyDirection, "kind %d is not a %s (%d..%d)", kind, v.kind_type, v.kind_h2h, hi);
  if (n == 0) return -1;  // nothing to do, and nothing to check
  if (dst == nullptr || src == nullptr) return c.rule(Err::InvalidValue, "dst or src is NULL for %zu bytes", n);
  *d = c.rt.memory().classify(dst, n);
  *s = c.rt.memory().classify(src, n);
  if (d->kind == Span::Bad) return c.rule(Err::InvalidValue, "dst %p %s", dst, d->why.c_str());
  if (s->kind == Span::Bad) return c.rule(Err::InvalidValue, "src %p %s", src, s->why.c_str());
  if (kind == v.kind_default) return 0;  // inferred from the pointers
  bool want_src_dev = kind == v.kind_d2h || kind == v.kind_d2d;
  bool want_dst_dev = kind == v.kind_h2d || kind == v.kind_d2d;
  if (want_src_dev != (s->kind == Span::Device))
    return c.rule(Err::InvalidValue, "kind %d needs %s src, but src %p is %s", kind,
                  want_src_dev ? "a device" : "a host", src, where(*s));
  if (want_dst_dev != (d->kind == Span::Device))
    return c.rule(Err::InvalidValue, "kind %d needs %s dst, but dst %p is %s", kind,
                  want_dst_dev ? "a device" : "a host", dst, where(*d));
  return 0;
}

// Enqueues the copy on `st` and waits as the vendor's API does. `sync_api`:
// Memcpy rather than MemcpyAsync (CUDA "API synchronization behavior").
int run_copy(Call& c, const std::shared_ptr<Stream>& st, const Span& d, const Span& s, size_t n,
             bool sync_api) {
  for (const Span* sp : {&d, &s})
    if (sp->kind == Span::Device && sp->device != st->device)
      return c.rule(Err::InvalidValue,
                    "pointer of device %d used on a stream of device %d; cross-device copies need %sMemcpyPeerAsync",
                    sp->device, st->device, c.v.prefix);
  char* dst = d.rw;
  const char* src = s.rw;
  const OpDesc op{OpDesc::Copy, st.get(), n, !sync_api, s.kind, d.kind, s.device, d.device};
  uint64_t seq;
  if (is_host(d) && is_host(s)) {  // host to host: fully synchronous, in stream order
    st->wait(enqueue_ordered(c.rt, st, observed(c.rt, op, [=] { std::memcpy(dst, src, n); })));
    return c.ok();
  }
  if (s.kind == Span::Pageable) {
    // Pageable source: staged now, so the caller may reuse it on return;
    // even the blocking Memcpy returns once staged (CUDA documents this).
    auto staged = std::make_shared<std::vector<char>>(src, src + n);
    enqueue_ordered(c.rt, st, observed(c.rt, op, [=] { std::memcpy(dst, staged->data(), n); }));
    return c.ok();
  }
  seq = enqueue_ordered(c.rt, st, observed(c.rt, op, [=] { std::memcpy(dst, src, n); }));
  // Into pageable memory: returns only when complete. Pinned to device with the
  // blocking call: synchronous. Device to device: no host synchronisation.
  bool wait = d.kind == Span::Pageable || (sync_api && s.kind == Span::Pinned) ||
              (sync_api && d.kind == Span::Pinned);
  if (wait) st->wait(seq);
  return c.ok();
}

}  // namespace

int memcpy_sync(const Vendor& v, const char* sym, void* dst, const void* src, size_t n, int kind) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  Span d, s;
  int rc = check_copy(c, dst, src, n, kind, &d, &s);
  if (rc != 0) return rc < 0 ? c.ok() : rc;
  // The legacy stream of the device that owns the device memory (UVA picks
  // it), else of the current device.
  int dev = d.kind == Span::Device ? d.device : s.kind == Span::Device ? s.device : c.current_device();
  int err;
  if (c.bad_device(dev, &err)) return err;
  c.touch(dev);
  return run_copy(c, c.rt.legacy_stream(dev), d, s, n, true);
}

int memcpy_async(const Vendor& v, const char* sym, void* dst, const void* src, size_t n, int kind,
                 void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  Span d, s;
  int rc = check_copy(c, dst, src, n, kind, &d, &s);
  if (rc != 0) return rc < 0 ? c.ok() : rc;
  int err = 0;
  std::shared_ptr<Stream> st = resolve_stream(c, stream, &err);
  if (!st) return err;
  return run_copy(c, st, d, s, n, false);
}

int memcpy_peer_async(const Vendor& v, const char* sym, void* dst, int dst_device, const void* src,
                      int src_device, size_t n, void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  int err = 0;
  if (c.bad_device(dst_device, &err) || c.bad_device(src_device, &err)) return err;
  std::shared_ptr<Stream> st = resolve_stream(c, stream, &err);
  if (!st) return err;
  if (n == 0) return c.ok();
  if (dst == nullptr || src == nullptr) return c.rule(Err::InvalidValue, "dst or src is NULL for %zu bytes", n);
  Span d = c.rt.memory().classify(dst, n), s = c.rt.memory().classify(src, n);
  if (d.kind == Span::Bad) return c.rule(Err::InvalidValue, "dst %p %s", dst, d.why.c_str());
  if (s.kind == Span::Bad) return c.rule(Err::InvalidValue, "src %p %s", src, s.why.c_str());
  if (d.kind != Span::Device || d.device != dst_device)
    return c.rule(Err::InvalidValue, "dst %p is not memory of device %d", dst, dst_device);
  if (s.kind != Span::Device || s.device != src_device)
    return c.rule(Err::InvalidValue, "src %p is not memory of device %d", src, src_device);
  c.touch(dst_device);
  c.touch(src_device);
  char* to = d.rw;
  const char* from = s.rw;
  const OpDesc op{OpDesc::Copy, st.get(), n, true, Span::Device, Span::Device, src_device, dst_device};
  enqueue_ordered(c.rt, st, observed(c.rt, op, [=] { std::memmove(to, from, n); }));
  return c.ok();
}

int memset_async(const Vendor& v, const char* sym, void* ptr, int value, size_t n, void* stream) {
  Call c(v, sym);
  if (c.blocked()) return c.result();
  int err = 0;
  std::shared_ptr<Stream> st = resolve_stream(c, stream, &err);
  if (!st) return err;
  if (n == 0) return c.ok();
  Span d = c.rt.memory().classify(ptr, n);
  if (d.kind == Span::Bad) return c.rule(Err::InvalidValue, "ptr %p %s", ptr, d.why.c_str());
  if (d.kind != Span::Device) return c.rule(Err::InvalidValue, "ptr %p is %s, not device memory", ptr, where(d));
  if (d.device != st->device)
    return c.rule(Err::InvalidValue, "pointer of device %d used on a stream of device %d", d.device, st->device);
  char* to = d.rw;
  OpDesc op{OpDesc::Set, st.get(), n, true};
  op.dst_device = d.device;
  op.value = value;
  enqueue_ordered(c.rt, st, observed(c.rt, op, [=] { std::memset(to, value, n); }));
  return c.ok();
}

}  // namespace simrt
