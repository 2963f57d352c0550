// copies: memcpy_sync/memcpy_async in every direction and memory kind,
// memset_async, peer copies and the host-buffer rules of memcpy_async. All
// results are read back through the device (never by dereferencing it).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

constexpr uint64_t kGuard = 64;  // bytes around each copy that must stay untouched
constexpr uint64_t k8MiB = uint64_t{8} << 20;
using Bytes = std::vector<unsigned char>;

// One side of a copy: device memory or host memory of a kind, with a way to
// set and read its whole content through the reference path (memcpy_sync).
class Endpoint {
 public:
  Endpoint(Ctx& c, bool device, HostKind kind, uint64_t bytes, int32_t dev = 0) : c_(c) {
    if (device) d_.reset(new DevBuf(c, dev, bytes));
    else h_.reset(new HostBuf(c, kind, bytes));
    size_ = bytes;
  }
  void* at(uint64_t off) const {
    return d_ ? d_->at(off) : (h_->data() ? h_->data() + off : nullptr);
  }
  void write_all(const Bytes& b) {
    if (d_) upload(c_, d_->get(), b.data(), size_);
    else std::memcpy(h_->data(), b.data(), size_);
  }
  Bytes read_all() const {
    Bytes b(size_);
    if (d_) download(c_, b.data(), d_->get(), size_);
    else std::memcpy(b.data(), h_->data(), size_);
    return b;
  }

 private:
  Ctx& c_;
  std::unique_ptr<DevBuf> d_;
  std::unique_ptr<HostBuf> h_;
  uint64_t size_ = 0;
};

Bytes pattern(uint64_t n, uint64_t seed) {
  Bytes b(n);
  fill_pattern(b.data(), n, seed);
  return b;
}

struct Layout {
  uint64_t n, src_off, dst_off;
};
// Sizes 0, 1, 4093 at unaligned offsets, 8 MiB.
const Layout kLayouts[] = {{0, 0, 0}, {1, 0, 0}, {4093, 3, 5}, {k8MiB, 0, 0}};

struct Case {
  int32_t kind;  // FLAGOS_MEMCPY_*
  bool async;
  HostKind host;
};

bool src_on_device(int32_t k) {
  return k == FLAGOS_MEMCPY_DEVICE_TO_HOST || k == FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
}
bool dst_on_device(int32_t k) {
  return k == FLAGOS_MEMCPY_HOST_TO_DEVICE || k == FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
}

flagos_status_t do_copy(Ctx& c, const Case& k, void* dst, const void* src, uint64_t n,
                        flagos_stream_t s) {
  if (!k.async) return c.api->memcpy_sync(dst, src, n, k.kind);
  flagos_status_t r = c.api->memcpy_async(dst, src, n, k.kind, s);
  return r == FLAGOS_SUCCESS ? c.api->stream_synchronize(s) : r;
}

// memcpy_sync: "size == 0 succeeds without touching either pointer", so size
// 0 gets what a 0-byte allocation returns (NULL for device and pinned
// memory), as for an empty tensor.
void copy_zero_null(Ctx& c, const Case& k) {
  Endpoint src(c, src_on_device(k.kind), k.host, 0), dst(c, dst_on_device(k.kind), k.host, 0);
  c.ok(c.api->memcpy_sync(dst.at(0), src.at(0), 0, k.kind), "memcpy_sync of 0 bytes (NULL)");
}

// Copies l.n bytes between real buffers with guard bytes around both ends
// (for l.n == 0 too: nothing may change).
void copy_layout(Ctx& c, const Case& k, const Layout& l, flagos_stream_t s) {
  if (l.n == 0 && !k.async) copy_zero_null(c, k);
  Endpoint src(c, src_on_device(k.kind), k.host, l.src_off + l.n + kGuard);
  Endpoint dst(c, dst_on_device(k.kind), k.host, l.dst_off + l.n + kGuard);
  Bytes a = pattern(l.src_off + l.n + kGuard, 1000 + l.n), b = pattern(l.dst_off + l.n + kGuard, 2000 + l.n);
  src.write_all(a);
  dst.write_all(b);
  c.ok(do_copy(c, k, dst.at(l.dst_off), src.at(l.src_off), l.n, s),
       strf("copy of %llu bytes", static_cast<unsigned long long>(l.n)));
  Bytes want = b;
  std::memcpy(want.data() + l.dst_off, a.data() + l.src_off, l.n);
  std::string diff = compare_bytes(dst.read_all().data(), want.data(), want.size());
  c.expect(diff.empty(), strf("%llu bytes (+%llu -> +%llu): ", static_cast<unsigned long long>(l.n),
                              static_cast<unsigned long long>(l.src_off),
                              static_cast<unsigned long long>(l.dst_off)) + diff);
  c.expect(src.read_all() == a, "the copy modified its source");
}

void copy_case(Ctx& c, const Case& k) {
  c.need_devices(1);
  if (k.host == HostKind::kPinned) {
    c.need_cap(FLAGOS_CAP_PINNED_HOST, "FLAGOS_CAP_PINNED_HOST");
    NEED_FN(c, host_alloc);
  }
  Stream s(c, 0);
  for (const Layout& l : kLayouts) copy_layout(c, k, l, s.get());
  c.note(std::string(k.async ? "0 B" : "0 B (also NULL)") +
         ", 1 B, 4093 B at +3/+5, 8 MiB; guard bytes intact");
}

const char* kind_name(int32_t k) {
  static const char* names[] = {"h2h", "h2d", "d2h", "d2d"};
  return names[k];
}

// ---- memset ----------------------------------------------------------------------

void memset_case(Ctx& c) {
  c.need_devices(1);
  Stream s(c, 0);
  for (const Layout& l : kLayouts) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xA7}, uint8_t{0xFF}}) {
      Endpoint dst(c, true, HostKind::kPageable, l.dst_off + l.n + kGuard);
      Bytes b = pattern(l.dst_off + l.n + kGuard, 3000 + v), want = b;
      dst.write_all(b);
      c.ok(c.api->memset_async(dst.at(l.dst_off), v, l.n, s.get()), "memset_async");
      c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
      std::memset(want.data() + l.dst_off, v, l.n);
      std::string diff = compare_bytes(dst.read_all().data(), want.data(), want.size());
      c.expect(diff.empty(), strf("memset 0x%02x of %llu bytes: ", v, static_cast<unsigned long long>(l.n)) + diff);
    }
  }
  c.note("0 B, 1 B, 4093 B at +5, 8 MiB; values 0x00, 0xA7, 0xFF; guard bytes intact");
}

// ---- host-buffer rules and ordering ---------------------------------------------------

std::string delayed_note(Ctx& c) {
  return c.testing ? "behind a 50 ms delay" : "no testing extension: not delayed (weaker)";
}

// "An H2D source may be reused at once": overwrite it right after the call,
// while a delay holds the copy back on the stream.
void pageable_source_reuse(Ctx& c) {
  c.need_devices(1);
  Stream s(c, 0);
  DevBuf d(c, 0, k8MiB);
  Bytes want = pattern(k8MiB, 11), src = want;
  if (c.testing) delay(c, s.get(), 50);
  c.ok(c.api->memcpy_async(d.get(), src.data(), k8MiB, FLAGOS_MEMCPY_HOST_TO_DEVICE, s.get()),
       "memcpy_async(H2D, pageable)");
  fill_pattern(src.data(), k8MiB, 12);
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  Bytes got(k8MiB);
  download(c, got.data(), d.get(), k8MiB);
  std::string diff = compare_bytes(got.data(), want.data(), k8MiB);
  c.require(diff.empty(), "the copy saw the overwritten source: " + diff);
  c.note(delayed_note(c));
}

// "A D2H destination is written before return": no synchronize needed.
void pageable_d2h_on_return(Ctx& c) {
  c.need_devices(1);
  const uint64_t n = 1 << 20;
  DevBuf d(c, 0, n);
  Bytes want = pattern(n, 13), got(n, 0);
  upload(c, d.get(), want.data(), n);
  Stream s(c, 0);
  if (c.testing) delay(c, s.get(), 50);
  c.ok(c.api->memcpy_async(got.data(), d.get(), n, FLAGOS_MEMCPY_DEVICE_TO_HOST, s.get()),
       "memcpy_async(D2H, pageable)");
  std::string diff = compare_bytes(got.data(), want.data(), n);
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  c.require(diff.empty(), "destination not complete when memcpy_async returned: " + diff);
  c.note(delayed_note(c));
}

// memcpy_sync is "ordered after all work previously enqueued on the default
// stream of the device(s) involved".
void sync_after_default_stream(Ctx& c) {
  c.need_devices(1);
  const uint64_t n = 1 << 20;
  flagos_stream_t s0 = default_stream(c, 0);
  DevBuf d(c, 0, n);
  if (c.testing) delay(c, s0, 50);
  c.ok(c.api->memset_async(d.get(), 0x77, n, s0), "memset_async(default stream)");
  Bytes got(n), want(n, 0x77);
  download(c, got.data(), d.get(), n);
  c.expect(compare_bytes(got.data(), want.data(), n).empty(),
           "D2H memcpy_sync ran before earlier default-stream work");
  if (c.testing) delay(c, s0, 50);
  c.ok(c.api->memset_async(d.get(), 0x11, n, s0), "memset_async(default stream)");
  want = pattern(n, 14);
  upload(c, d.get(), want.data(), n);
  c.ok(c.api->stream_synchronize(s0), "stream_synchronize");
  download(c, got.data(), d.get(), n);
  c.expect(compare_bytes(got.data(), want.data(), n).empty(),
           "H2D memcpy_sync was overwritten by earlier default-stream work");
  c.note(delayed_note(c));
}

// memcpy_sync is "complete on return": other streams see its result at once.
void sync_copy_complete(Ctx& c) {
  c.need_devices(1);
  const uint64_t n = 1 << 20;
  DevBuf d(c, 0, n), e(c, 0, n);
  Bytes want = pattern(n, 15), got(n, 0);
  Stream s(c, 0);
  upload(c, d.get(), want.data(), n);
  c.ok(c.api->memcpy_async(got.data(), d.get(), n, FLAGOS_MEMCPY_DEVICE_TO_HOST, s.get()),
       "memcpy_async(D2H) on another stream");
  c.expect(compare_bytes(got.data(), want.data(), n).empty(), "H2D memcpy_sync not complete on return");
  c.ok(c.api->memcpy_sync(e.get(), d.get(), n, FLAGOS_MEMCPY_DEVICE_TO_DEVICE), "memcpy_sync(D2D)");
  std::fill(got.begin(), got.end(), 0);
  c.ok(c.api->memcpy_async(got.data(), e.get(), n, FLAGOS_MEMCPY_DEVICE_TO_HOST, s.get()),
       "memcpy_async(D2H) on another stream");
  c.expect(compare_bytes(got.data(), want.data(), n).empty(), "D2D memcpy_sync not complete on return");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
}

// Work on one stream runs in enqueue order, whatever its kind.
void stream_order(Ctx& c) {
  c.need_devices(1);
  const uint64_t n = 1 << 20, q = n / 4;
  Stream s(c, 0);
  DevBuf d(c, 0, n);
  Bytes a = pattern(q, 21), want(n, 0x11), got(n, 0);
  if (c.testing) delay(c, s.get(), 20);
  auto* base = static_cast<char*>(d.get());
  c.ok(c.api->memset_async(base, 0x11, n, s.get()), "memset_async");
  c.ok(c.api->memcpy_async(base + q, a.data(), q, FLAGOS_MEMCPY_HOST_TO_DEVICE, s.get()), "H2D");
  c.ok(c.api->memset_async(base + 2 * q, 0x22, q, s.get()), "memset_async");
  c.ok(c.api->memcpy_async(base + 3 * q, base + q, q, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, s.get()), "D2D");
  c.ok(c.api->memset_async(base, 0x33, 1, s.get()), "memset_async");
  c.ok(c.api->memcpy_async(got.data(), base, n, FLAGOS_MEMCPY_DEVICE_TO_HOST, s.get()), "D2H");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  std::memcpy(want.data() + q, a.data(), q);
  std::memset(want.data() + 2 * q, 0x22, q);
  std::memcpy(want.data() + 3 * q, a.data(), q);
  want[0] = 0x33;
  std::string diff = compare_bytes(got.data(), want.data(), n);
  c.require(diff.empty(), "out-of-order result: " + diff);
}

// The same round trip on every device, on that device's own stream.
void each_device(Ctx& c) {
  c.need_devices(1);
  const uint64_t n = 65536 + 3;
  for (int d = 0; d < c.device_count; ++d) {
    Stream s(c, d);
    DevBuf a(c, d, n), b(c, d, n);
    Bytes want = pattern(n, 30 + d), got(n, 0);
    c.ok(c.api->memcpy_async(a.get(), want.data(), n, FLAGOS_MEMCPY_HOST_TO_DEVICE, s.get()), "H2D");
    c.ok(c.api->memcpy_async(b.get(), a.get(), n, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, s.get()), "D2D");
    c.ok(c.api->memcpy_async(got.data(), b.get(), n, FLAGOS_MEMCPY_DEVICE_TO_HOST, s.get()), "D2H");
    c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
    c.expect(compare_bytes(got.data(), want.data(), n).empty(), strf("device %d: round trip differs", d));
  }
  c.note(strf("%d device(s)", c.device_count));
}

void peer_layout(Ctx& c, int src_dev, int dst_dev, const Layout& l) {
  Endpoint src(c, true, HostKind::kPageable, l.src_off + l.n + kGuard, src_dev);
  Endpoint dst(c, true, HostKind::kPageable, l.dst_off + l.n + kGuard, dst_dev);
  Bytes a = pattern(l.src_off + l.n + kGuard, 40 + l.n), want = pattern(l.dst_off + l.n + kGuard, 50);
  src.write_all(a);
  dst.write_all(want);
  Stream s(c, dst_dev);
  c.ok(c.api->memcpy_peer_async(dst.at(l.dst_off), dst_dev, src.at(l.src_off), src_dev, l.n, s.get()),
       strf("memcpy_peer_async(%d -> %d)", src_dev, dst_dev));
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  std::memcpy(want.data() + l.dst_off, a.data() + l.src_off, l.n);
  std::string diff = compare_bytes(dst.read_all().data(), want.data(), want.size());
  c.expect(diff.empty(), strf("%d -> %d, %llu bytes: ", src_dev, dst_dev,
                              static_cast<unsigned long long>(l.n)) + diff);
}

void peer_copy(Ctx& c) {
  c.need_devices(2);
  NEED_FN(c, memcpy_peer_async);
  for (int dir = 0; dir < 2; ++dir)
    for (const Layout& l : kLayouts)
      if (l.n > 0) peer_layout(c, dir, 1 - dir, l);
  c.note("0 -> 1 and 1 -> 0: 1 B, 4093 B at +3/+5, 8 MiB");
}

}  // namespace

Group copies_group() {
  Group g("copies", "copy matrix by direction, mode and host memory kind; memset; peer; host-buffer rules");
  for (int32_t kind : {FLAGOS_MEMCPY_HOST_TO_DEVICE, FLAGOS_MEMCPY_DEVICE_TO_HOST,
                       FLAGOS_MEMCPY_DEVICE_TO_DEVICE, FLAGOS_MEMCPY_HOST_TO_HOST})
    for (bool async : {false, true})
      for (HostKind host : {HostKind::kPageable, HostKind::kPinned}) {
        // Device-to-device involves no host memory: one case per mode.
        if (kind == FLAGOS_MEMCPY_DEVICE_TO_DEVICE && host == HostKind::kPinned) continue;
        std::string name = strf("%s.%s", kind_name(kind), async ? "async" : "sync");
        if (kind != FLAGOS_MEMCPY_DEVICE_TO_DEVICE) name += std::string(".") + host_kind_name(host);
        Case k{kind, async, host};
        g.add(name, [k](Ctx& c) { copy_case(c, k); });
      }
  g.add("memset-async", memset_case)
      .add("pageable-source-reusable-at-return", pageable_source_reuse)
      .add("pageable-d2h-complete-at-return", pageable_d2h_on_return)
      .add("sync-copy-after-default-stream", sync_after_default_stream)
      .add("sync-copy-complete-at-return", sync_copy_complete)
      .add("stream-order", stream_order)
      .add("each-device-roundtrip", each_device)
      .add("peer-copy", peer_copy);
  return g;
}

}  // namespace conformance
