// collectives: FLAGOS_EXTENSION_COLLECTIVES (flagos/ext/collectives.h), run
// only when the plugin chains it. Ranks are threads of this process, each
// with its own comm_create on one id and its own stream (on device
// rank % device_count). Inputs are small integers, so every result is exact
// in every dtype and is compared byte for byte with a reference computed
// here. A watchdog aborts every communicator of a check that hangs, so one
// broken rank fails the check instead of stalling the run.
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <thread>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

using Coll = flagos_collectives_ext_t;

const Coll& need_coll(Ctx& c) {
  const Coll* e = &need_extension<Coll>(c, FLAGOS_EXTENSION_COLLECTIVES, "collectives", FLAGOS_COLLECTIVES_EXT_SIZE_1_2);
  c.need_devices(1);
  // A plugin opens its communicator library at first use; without it the
  // extension answers RUNTIME_UNAVAILABLE (collectives.h), which is a skip.
  static const std::string unavailable = [&] {
    flagos_comm_id_t id;
    return e->comm_id_create(&id) == FLAGOS_ERROR_RUNTIME_UNAVAILABLE ? c.last_error() : std::string();
  }();
  if (!unavailable.empty()) c.skip(unavailable);
  return *e;
}

// ---- element types and the reference ------------------------------------------

struct DType {
  const char* name;
  flagos_dtype_t dt;
  size_t size;
};

const DType kTypes[] = {
    {"float32", {FLAGOS_DTYPE_FLOAT, 32, 1}, 4}, {"float64", {FLAGOS_DTYPE_FLOAT, 64, 1}, 8},
    {"float16", {FLAGOS_DTYPE_FLOAT, 16, 1}, 2}, {"bfloat16", {FLAGOS_DTYPE_BFLOAT, 16, 1}, 2},
    {"int8", {FLAGOS_DTYPE_INT, 8, 1}, 1},       {"int16", {FLAGOS_DTYPE_INT, 16, 1}, 2},
    {"int32", {FLAGOS_DTYPE_INT, 32, 1}, 4},     {"int64", {FLAGOS_DTYPE_INT, 64, 1}, 8},
    {"uint8", {FLAGOS_DTYPE_UINT, 8, 1}, 1},     {"bool", {FLAGOS_DTYPE_BOOL, 8, 1}, 1},
};

const char* const kOpNames[] = {"SUM", "PROD", "MIN", "MAX", "AVG"};

bool is_float(const DType& t) {
  return t.dt.code == FLAGOS_DTYPE_FLOAT || t.dt.code == FLAGOS_DTYPE_BFLOAT;
}
bool is_bool(const DType& t) { return t.dt.code == FLAGOS_DTYPE_BOOL; }

template <class To, class From>
To bitcast(From v) {
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

// Round to nearest even; only values a half can nearly hold occur here.
uint16_t to_half(float f) {
  uint32_t u = bitcast<uint32_t>(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (u < 0x38800000u) {  // subnormal half: scale so that the FPU rounds
    float t = bitcast<float>(u) * 16777216.0f;  // * 2^24: units of the smallest subnormal
    float r = std::nearbyint(t);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  uint32_t mant = u & 0x7fffffu, exp = (u >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}
uint16_t to_bf16(float f) {
  uint32_t u = bitcast<uint32_t>(f);
  uint32_t rest = u & 0xffffu, h = u >> 16;
  if (rest > 0x8000u || (rest == 0x8000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

// Writes value `v` (exact in every type here, or a float AVG result) as type t.
void put(const DType& t, void* p, double v) {
  switch (t.dt.code) {
    case FLAGOS_DTYPE_FLOAT:
      if (t.size == 4) { float f = static_cast<float>(v); std::memcpy(p, &f, 4); }
      else if (t.size == 8) std::memcpy(p, &v, 8);
      else { uint16_t h = to_half(static_cast<float>(v)); std::memcpy(p, &h, 2); }
      return;
    case FLAGOS_DTYPE_BFLOAT: { uint16_t h = to_bf16(static_cast<float>(v)); std::memcpy(p, &h, 2); return; }
    case FLAGOS_DTYPE_BOOL: *static_cast<uint8_t*>(p) = v != 0; return;
    default: {
      int64_t i = static_cast<int64_t>(v);
      std::memcpy(p, &i, t.size);  // little endian: the low bytes
    }
  }
}

// Rank r's input element i: small integers (bool 0/1, uint8 1..5, else -4..4).
double gen(const DType& t, int r, uint64_t i, int salt) {
  uint64_t x = i * 7 + static_cast<uint64_t>(r) * 13 + static_cast<uint64_t>(salt) * 5;
  if (is_bool(t)) return (x % 3) == 0 ? 1 : 0;
  if (t.dt.code == FLAGOS_DTYPE_UINT) return static_cast<double>(x % 5 + 1);
  return static_cast<double>(x % 9) - 4;
}

// The reduction of element i over ranks [0, n), as type t stores it.
void reference(const DType& t, int op, int n, uint64_t i, int salt, void* out, int block = 0,
               uint64_t count = 0) {
  double acc = 0;
  for (int r = 0; r < n; ++r) {
    double v = gen(t, r, static_cast<uint64_t>(block) * count + i, salt);
    if (r == 0) { acc = v; continue; }
    if (is_bool(t)) {
      bool a = acc != 0, b = v != 0;
      acc = (op == FLAGOS_REDUCE_PROD || op == FLAGOS_REDUCE_MIN) ? (a && b) : (a || b);
    } else if (op == FLAGOS_REDUCE_PROD) acc *= v;
    else if (op == FLAGOS_REDUCE_MIN) acc = v < acc ? v : acc;
    else if (op == FLAGOS_REDUCE_MAX) acc = v > acc ? v : acc;
    else acc += v;
  }
  if (op == FLAGOS_REDUCE_AVG) {  // divided in the type's own arithmetic
    if (t.size == 8) acc = acc / n;
    else acc = static_cast<double>(static_cast<float>(acc) / static_cast<float>(n));
  }
  put(t, out, acc);
}

std::vector<unsigned char> input(const DType& t, int r, uint64_t count, int salt) {
  std::vector<unsigned char> v(count * t.size);
  for (uint64_t i = 0; i < count; ++i) put(t, v.data() + i * t.size, gen(t, r, i, salt));
  return v;
}

// ---- ranks as threads -----------------------------------------------------------

struct Rank {
  int r, n;
  int32_t dev;
  flagos_comm_t comm;
  flagos_stream_t stream;
};

// Runs body(rank) on n threads that each joined one communicator, then
// destroys them. Aborts every communicator if the ranks are not done in time.
void with_ranks(Ctx& c, const Coll& x, int n, const std::function<void(Rank&)>& body,
                double limit_ms = 20000) {
  flagos_comm_id_t id;
  c.ok(x.comm_id_create(&id), "comm_id_create");
  std::vector<flagos_comm_t> comms(n, nullptr);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    if (cv.wait_for(lock, std::chrono::duration<double, std::milli>(limit_ms), [&] { return done; }))
      return;
    c.expect(false, strf("the ranks were not done after %.0f ms: every communicator aborted", limit_ms));
    for (flagos_comm_t cm : comms)
      if (cm) x.comm_abort(cm);
  });
  run_threads(c, n, [&](int r) {
    Rank k{r, n, r % c.device_count, nullptr, nullptr};
    flagos_comm_t cm = nullptr;
    c.ok(x.comm_create(&id, n, r, k.dev, 10000, &cm), strf("comm_create(rank %d of %d)", r, n));
    {
      std::lock_guard<std::mutex> lock(mu);
      comms[r] = cm;
    }
    k.comm = cm;
    Stream s(c, k.dev);
    k.stream = s.get();
    try {
      body(k);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      x.comm_abort(cm);  // the peers must not wait for this rank
      throw;
    }
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  for (flagos_comm_t cm : comms)
    if (cm) c.expect_status(x.comm_destroy(cm), FLAGOS_SUCCESS, "comm_destroy");
}

// Whether `n` ranks fit on this machine: one device each, or, with fewer
// devices, a communicator that lets ranks share one (NCCL does not: it
// refuses two ranks on one GPU). `why` says why not. Asked once per process.
bool ranks_fit(Ctx& c, const Coll& x, int n, std::string* why) {
  if (n <= c.device_count) return true;
  static const std::string shared_refused = [&] {
    flagos_comm_id_t id;
    if (x.comm_id_create(&id) != FLAGOS_SUCCESS) return "comm_id_create: " + c.last_error();
    flagos_comm_t cm[2] = {nullptr, nullptr};
    flagos_status_t st[2];
    std::string msg[2];
    std::thread t1([&] { st[1] = x.comm_create(&id, 2, 1, 0, 10000, &cm[1]); msg[1] = c.last_error(); });
    st[0] = x.comm_create(&id, 2, 0, 0, 10000, &cm[0]);
    msg[0] = c.last_error();
    t1.join();
    for (flagos_comm_t k : cm)
      if (k) x.comm_destroy(k);
    for (int r = 0; r < 2; ++r)
      if (st[r] != FLAGOS_SUCCESS) return msg[r];
    return std::string();
  }();
  if (shared_refused.empty()) return true;
  *why = strf("%d ranks need %d devices, this machine has %d, and the communicator refuses ranks sharing one (",
              n, n, c.device_count) + shared_refused + ")";
  return false;
}

void need_ranks(Ctx& c, const Coll& x, int n) {
  std::string why;
  if (!ranks_fit(c, x, n, &why)) c.skip(why);
}

void sync(Ctx& c, const Rank& k, const std::string& what) {
  c.ok(c.api->stream_synchronize(k.stream), "stream_synchronize after " + what);
}

void same(Ctx& c, const Rank& k, const std::vector<unsigned char>& got,
          const std::vector<unsigned char>& want, const std::string& what) {
  std::string diff = compare_bytes(got.data(), want.data(), got.size());
  c.expect(diff.empty(), strf("rank %d of %d: ", k.r, k.n) + what + ": " + diff);
}

// ---- one call of each collective, checked ---------------------------------------

void all_reduce_case(Ctx& c, const Coll& x, const Rank& k, const DType& t, int op, uint64_t count,
                     bool in_place, int salt) {
  std::string what = strf("all_reduce(%s, %s, count %llu%s)", t.name, kOpNames[op],
                          (unsigned long long)count, in_place ? ", in place" : "");
  uint64_t bytes = count * t.size;
  DevBuf send(c, k.dev, bytes), recv(c, k.dev, bytes);
  upload(c, send.get(), input(t, k.r, count, salt).data(), bytes);
  void* out = in_place ? send.get() : recv.get();
  c.ok(x.all_reduce(send.get(), out, count, t.dt, op, k.comm, k.stream), what);
  sync(c, k, what);
  std::vector<unsigned char> got(bytes), want(bytes);
  download(c, got.data(), out, bytes);
  for (uint64_t i = 0; i < count; ++i) reference(t, op, k.n, i, salt, want.data() + i * t.size);
  same(c, k, got, want, what);
}

void broadcast_case(Ctx& c, const Coll& x, const Rank& k, const DType& t, int root,
                    uint64_t count, bool in_place, int salt) {
  std::string what = strf("broadcast(%s, root %d, count %llu%s)", t.name, root,
                          (unsigned long long)count, in_place ? ", in place" : "");
  uint64_t bytes = count * t.size;
  DevBuf send(c, k.dev, bytes), recv(c, k.dev, bytes);
  upload(c, send.get(), input(t, k.r, count, salt).data(), bytes);
  void* out = in_place ? send.get() : recv.get();
  c.ok(x.broadcast(send.get(), out, count, t.dt, root, k.comm, k.stream), what);
  sync(c, k, what);
  std::vector<unsigned char> got(bytes);
  download(c, got.data(), out, bytes);
  same(c, k, got, input(t, root, count, salt), what);
}

void reduce_case(Ctx& c, const Coll& x, const Rank& k, const DType& t, int op, int root,
                 uint64_t count, bool in_place, int salt) {
  std::string what = strf("reduce(%s, %s, root %d, count %llu%s)", t.name, kOpNames[op], root,
                          (unsigned long long)count, in_place ? ", in place" : "");
  uint64_t bytes = count * t.size;
  DevBuf send(c, k.dev, bytes), recv(c, k.dev, bytes);
  upload(c, send.get(), input(t, k.r, count, salt).data(), bytes);
  void* out = in_place ? send.get() : (k.r == root ? recv.get() : nullptr);
  c.ok(x.reduce(send.get(), out, count, t.dt, op, root, k.comm, k.stream), what);
  sync(c, k, what);
  std::vector<unsigned char> got(bytes), want(bytes);
  if (k.r == root) {
    download(c, got.data(), out, bytes);
    for (uint64_t i = 0; i < count; ++i) reference(t, op, k.n, i, salt, want.data() + i * t.size);
    same(c, k, got, want, what);
  } else if (!in_place) {  // a non-root's send is left alone
    download(c, got.data(), send.get(), bytes);
    same(c, k, got, input(t, k.r, count, salt), what + " (non-root send)");
  }
}

void all_gather_case(Ctx& c, const Coll& x, const Rank& k, const DType& t, uint64_t count,
                     bool in_place, int salt) {
  std::string what = strf("all_gather(%s, count %llu%s)", t.name, (unsigned long long)count,
                          in_place ? ", in place" : "");
  uint64_t bytes = count * t.size;
  DevBuf send(c, k.dev, bytes), recv(c, k.dev, bytes * k.n);
  void* src = in_place ? recv.at(bytes * k.r) : send.get();
  upload(c, src, input(t, k.r, count, salt).data(), bytes);
  c.ok(x.all_gather(src, recv.get(), count, t.dt, k.comm, k.stream), what);
  sync(c, k, what);
  std::vector<unsigned char> got(bytes * k.n), want;
  download(c, got.data(), recv.get(), got.size());
  for (int r = 0; r < k.n; ++r) {
    auto v = input(t, r, count, salt);
    want.insert(want.end(), v.begin(), v.end());
  }
  same(c, k, got, want, what);
}

void reduce_scatter_case(Ctx& c, const Coll& x, const Rank& k, const DType& t, int op,
                         uint64_t count, bool in_place, int salt) {
  std::string what = strf("reduce_scatter(%s, %s, count %llu%s)", t.name, kOpNames[op],
                          (unsigned long long)count, in_place ? ", in place" : "");
  uint64_t bytes = count * t.size;
  DevBuf send(c, k.dev, bytes * k.n), recv(c, k.dev, bytes);
  // Rank r's send: n blocks, block b holding gen(r, b * count + i).
  upload(c, send.get(), input(t, k.r, count * k.n, salt).data(), bytes * k.n);
  void* out = in_place ? send.at(bytes * k.r) : recv.get();
  c.ok(x.reduce_scatter(send.get(), out, count, t.dt, op, k.comm, k.stream), what);
  sync(c, k, what);
  std::vector<unsigned char> got(bytes), want(bytes);
  download(c, got.data(), out, bytes);
  for (uint64_t i = 0; i < count; ++i)
    reference(t, op, k.n, i, salt, want.data() + i * t.size, k.r, count);
  same(c, k, got, want, what);
}

// Every op on every dtype, small counts (one with a remainder per share).
void every_op(Ctx& c, const Coll& x, const Rank& k, bool in_place) {
  int salt = 0;
  for (const DType& t : kTypes) {
    if (!x.supports_dtype(t.dt)) continue;
    for (int op = FLAGOS_REDUCE_SUM; op <= FLAGOS_REDUCE_AVG; ++op) {
      if (!(x.reduce_ops & (1u << op)) || (op == FLAGOS_REDUCE_AVG && !is_float(t))) continue;
      for (uint64_t count : {uint64_t{1}, uint64_t{1001}})
        all_reduce_case(c, x, k, t, op, count, in_place, ++salt);
    }
    const int op = (salt % 2) ? FLAGOS_REDUCE_SUM : FLAGOS_REDUCE_MAX;
    const int root = salt % k.n;
    broadcast_case(c, x, k, t, k.n - 1, 777, in_place, ++salt);
    reduce_case(c, x, k, t, op, root, 777, in_place, ++salt);
    all_gather_case(c, x, k, t, 333, in_place, ++salt);
    reduce_scatter_case(c, x, k, t, op, 333, in_place, ++salt);
  }
}

// ---- checks ------------------------------------------------------------------------

void extension_table(Ctx& c) {
  const Coll& x = need_coll(c);
  c.require(x.supports_dtype && x.comm_id_create && x.comm_create && x.comm_destroy &&
                x.comm_abort && x.comm_status && x.all_reduce && x.broadcast && x.reduce &&
                x.all_gather && x.reduce_scatter && x.send && x.recv && x.group_start &&
                x.group_end,
            "a function of the collectives extension is NULL");
  c.expect(x.reduce_ops & (1u << FLAGOS_REDUCE_SUM), "reduce_ops lacks SUM");
  c.expect((x.reduce_ops >> (FLAGOS_REDUCE_AVG + 1)) == 0, "reduce_ops has bits of unknown reductions");
  c.expect(x.supports_dtype(flagos_dtype_t{FLAGOS_DTYPE_FLOAT, 32, 1}) == 1, "float32 is not supported");
  c.expect(x.supports_dtype(flagos_dtype_t{FLAGOS_DTYPE_FLOAT, 32, 4}) == 0, "4-lane float32 is supported");
  std::string types;
  for (const DType& t : kTypes)
    if (x.supports_dtype(t.dt)) types += std::string(types.empty() ? "" : " ") + t.name;
  c.note(strf("reduce_ops 0x%x; dtypes: %s", x.reduce_ops, types.c_str()));
}

void ids_and_status(Ctx& c) {
  const Coll& x = need_coll(c);
  flagos_comm_id_t a, b;
  c.ok(x.comm_id_create(&a), "comm_id_create");
  c.ok(x.comm_id_create(&b), "comm_id_create");
  c.expect(std::memcmp(a.bytes, b.bytes, sizeof a.bytes) != 0, "two comm_id_create calls gave one id");
  flagos_comm_t cm = nullptr;
  c.ok(x.comm_create(&a, 1, 0, 0, 5000, &cm), "comm_create(1 rank)");
  c.expect_status(x.comm_status(cm), FLAGOS_SUCCESS, "comm_status(new communicator)");
  c.expect_status(x.comm_destroy(cm), FLAGOS_SUCCESS, "comm_destroy");
  c.expect_status(x.comm_destroy(nullptr), FLAGOS_SUCCESS, "comm_destroy(NULL)");
}

void ranks_check(Ctx& c, int n) {
  const Coll& x = need_coll(c);
  need_ranks(c, x, n);
  double t0 = now_ms();
  with_ranks(c, x, n, [&](Rank& k) { every_op(c, x, k, false); });
  c.note(strf("every op and dtype with %d rank(s) in %.0f ms", n, now_ms() - t0));
}

void in_place(Ctx& c) {
  const Coll& x = need_coll(c);
  std::string ran, why;
  for (int n : {1, 2, 3}) {
    if (!ranks_fit(c, x, n, &why)) break;
    with_ranks(c, x, n, [&](Rank& k) { every_op(c, x, k, true); });
    ran += strf("%s%d", ran.empty() ? "" : ", ", n);
  }
  c.note("all_reduce, broadcast, reduce, all_gather, reduce_scatter in place; ranks: " + ran +
         (why.empty() ? "" : "; no more: " + why));
}

// Counts that span many staging chunks, and a bandwidth note.
void large(Ctx& c) {
  const Coll& x = need_coll(c);
  const DType& f32 = kTypes[0];
  const DType& bf16 = kTypes[3];
  const uint64_t mib8 = (8u << 20) / 4;
  need_ranks(c, x, 2);
  double busbw = 0;
  with_ranks(c, x, 2, [&](Rank& k) {
    all_reduce_case(c, x, k, f32, FLAGOS_REDUCE_SUM, mib8 + 3, false, 1);
    all_reduce_case(c, x, k, bf16, FLAGOS_REDUCE_AVG, 3000001, true, 2);
    broadcast_case(c, x, k, f32, 1, mib8 + 5, false, 3);
    all_gather_case(c, x, k, kTypes[7], 700001, false, 4);
    reduce_scatter_case(c, x, k, kTypes[6], FLAGOS_REDUCE_SUM, 700001, false, 5);
    // Timing: 5 all_reduces of 8 MiB float32 after a warm-up.
    DevBuf buf(c, k.dev, mib8 * 4);
    c.ok(c.api->memset_async(buf.get(), 0, mib8 * 4, k.stream), "memset_async");
    c.ok(x.all_reduce(buf.get(), buf.get(), mib8, f32.dt, FLAGOS_REDUCE_SUM, k.comm, k.stream), "all_reduce");
    sync(c, k, "warm-up all_reduce");
    double t0 = now_ms();
    for (int i = 0; i < 5; ++i)
      c.ok(x.all_reduce(buf.get(), buf.get(), mib8, f32.dt, FLAGOS_REDUCE_SUM, k.comm, k.stream), "all_reduce");
    sync(c, k, "timed all_reduce");
    if (k.r == 0) busbw = 5.0 * mib8 * 4 / ((now_ms() - t0) * 1e6);  // 2 ranks: busbw = algbw
  });
  c.note(strf("multi-chunk ops with 2 ranks; all_reduce 8 MiB float32: %.2f GB/s bus bandwidth", busbw));
}

// A ring of sends and receives larger than any staging buffer, inside a
// group: only progressing them together avoids a deadlock.
void p2p_ring(Ctx& c) {
  const Coll& x = need_coll(c);
  const DType& t = kTypes[0];
  const uint64_t count = (3u << 20) / 4 + 7;
  need_ranks(c, x, 2);
  std::string why;
  for (int n : {2, 3}) {
    if (!ranks_fit(c, x, n, &why)) break;
    with_ranks(c, x, n, [&](Rank& k) {
      int next = (k.r + 1) % n, prev = (k.r + n - 1) % n;
      DevBuf send(c, k.dev, count * 4), recv(c, k.dev, count * 4), small(c, k.dev, 64);
      upload(c, send.get(), input(t, k.r, count, 9).data(), count * 4);
      c.ok(x.group_start(), "group_start");
      c.ok(x.group_start(), "group_start (nested)");
      c.ok(x.send(send.get(), count, t.dt, next, k.comm, k.stream), "send");
      c.ok(x.group_end(), "group_end (inner)");
      c.ok(x.recv(recv.get(), count, t.dt, prev, k.comm, k.stream), "recv");
      c.ok(x.group_end(), "group_end");
      sync(c, k, "ring in a group");
      std::vector<unsigned char> got(count * 4);
      download(c, got.data(), recv.get(), got.size());
      same(c, k, got, input(t, prev, count, 9), strf("ring of %d: recv from rank %d", n, prev));
      // Outside a group: rank 0 sends 16 floats to every other rank, in rank order.
      if (k.r == 0) {
        upload(c, small.get(), input(t, 0, 16, 10).data(), 64);
        for (int r = 1; r < n; ++r) c.ok(x.send(small.get(), 16, t.dt, r, k.comm, k.stream), "send");
      } else {
        c.ok(x.recv(small.get(), 16, t.dt, 0, k.comm, k.stream), "recv");
      }
      sync(c, k, "send/recv outside a group");
      std::vector<unsigned char> s(64);
      download(c, s.data(), small.get(), 64);
      same(c, k, s, input(t, 0, 16, 10), "send/recv outside a group");
    });
  }
  c.note(strf("rings of 2 and 3 ranks, %llu bytes each way; then sends outside a group",
              (unsigned long long)count * 4) + (why.empty() ? "" : "; not 3 ranks: " + why));
}

// A rank whose peer never calls the collective stays blocked until
// comm_abort, which fails it with COMM; the peer learns it too.
void abort_unblocks(Ctx& c) {
  const Coll& x = need_coll(c);
  need_ranks(c, x, 2);
  const int32_t dev1 = 1 % c.device_count;
  flagos_comm_id_t id;
  c.ok(x.comm_id_create(&id), "comm_id_create");
  flagos_comm_t cm[2] = {nullptr, nullptr};
  flagos_status_t created[2];
  {
    std::thread t1([&] { created[1] = x.comm_create(&id, 2, 1, dev1, 10000, &cm[1]); });
    created[0] = x.comm_create(&id, 2, 0, 0, 10000, &cm[0]);
    t1.join();
  }
  c.ok(created[0], "comm_create(rank 0)");
  c.ok(created[1], "comm_create(rank 1)");
  Stream s0(c, 0), s1(c, dev1);
  DevBuf buf(c, 0, 4096), buf1(c, dev1, 4096);
  const flagos_dtype_t f32 = kTypes[0].dt;
  c.ok(x.all_reduce(buf.get(), buf.get(), 1024, f32, FLAGOS_REDUCE_SUM, cm[0], s0.get()), "all_reduce(rank 0)");
  sleep_ms(100);
  c.expect_status(c.api->stream_query(s0.get()), FLAGOS_NOT_READY, "stream_query while the peer is missing");
  double t0 = now_ms();
  c.ok(x.comm_abort(cm[0]), "comm_abort");
  double t_abort = now_ms() - t0;
  flagos_status_t st = c.api->stream_synchronize(s0.get());
  double t_fail = now_ms() - t0;
  // Over NCCL the aborted kernels just end: the stream completes, and
  // comm_status (checked below) alone reports the failure (collectives.h).
  if (st != FLAGOS_SUCCESS) c.expect_status(st, FLAGOS_ERROR_COMM, "stream_synchronize after comm_abort");
  c.expect(t_abort < 100, strf("comm_abort took %.0f ms", t_abort));
  c.expect(t_fail < 2000, strf("the blocked all_reduce failed %.0f ms after comm_abort", t_fail));
  c.expect_status(x.comm_status(cm[0]), FLAGOS_ERROR_COMM, "comm_status(aborted)");
  // Rank 1 now fails too: at the call, or on its stream, within 2 s where
  // the plugin tells peers; else (NCCL) its own comm_abort ends it.
  t0 = now_ms();
  st = x.all_reduce(buf1.get(), buf1.get(), 1024, f32, FLAGOS_REDUCE_SUM, cm[1], s1.get());
  while (st == FLAGOS_SUCCESS && now_ms() - t0 < 2000) {
    st = c.api->stream_query(s1.get());
    if (st == FLAGOS_NOT_READY) { st = FLAGOS_SUCCESS; sleep_ms(5); } else if (st == FLAGOS_SUCCESS) break;
  }
  const bool told = st != FLAGOS_SUCCESS || x.comm_status(cm[1]) != FLAGOS_SUCCESS;
  if (!told) {
    c.ok(x.comm_abort(cm[1]), "comm_abort(rank 1)");
    st = c.api->stream_synchronize(s1.get());
  }
  if (st != FLAGOS_SUCCESS) c.expect_status(st, FLAGOS_ERROR_COMM, "rank 1's all_reduce after rank 0's comm_abort");
  c.expect(now_ms() - t0 < 4000, strf("rank 1 failed after %.0f ms", now_ms() - t0));
  c.expect_status(x.comm_status(cm[1]), FLAGOS_ERROR_COMM, "comm_status(rank 1)");
  c.expect_status(x.comm_destroy(cm[0]), FLAGOS_SUCCESS, "comm_destroy(rank 0)");
  c.expect_status(x.comm_destroy(cm[1]), FLAGOS_SUCCESS, "comm_destroy(rank 1)");
  c.note(strf("blocked all_reduce failed %.1f ms after comm_abort; rank 1 %s", t_fail,
              told ? "was told" : "is not told by this plugin, its own comm_abort ended it"));
}

void create_timeout(Ctx& c) {
  const Coll& x = need_coll(c);
  flagos_comm_id_t id;
  c.ok(x.comm_id_create(&id), "comm_id_create");
  flagos_comm_t cm = nullptr;
  double t0 = now_ms();
  flagos_status_t st = x.comm_create(&id, 2, 0, 0, 200, &cm);
  double took = now_ms() - t0;
  if (st == FLAGOS_SUCCESS) x.comm_destroy(cm);
  std::string msg = c.last_error();
  c.expect_status(st, FLAGOS_ERROR_TIMEOUT, "comm_create(rank 0 of 2, alone, 200 ms)");
  c.expect(took >= 150 && took < 5000, strf("comm_create gave up after %.0f ms of a 200 ms timeout", took));
  c.expect(!msg.empty(), "no last_error_message for the timeout");
  c.note(strf("TIMEOUT after %.0f ms: %s", took, msg.c_str()));
}

// Bad arguments return an error and enqueue nothing: rank 1 never calls, so
// anything enqueued on rank 0's stream would stay pending.
void argument_errors(Ctx& c) {
  const Coll& x = need_coll(c);
  flagos_comm_id_t id;
  c.ok(x.comm_id_create(&id), "comm_id_create");
  flagos_comm_t cm = nullptr;
  // comm_create argument errors come before any rendezvous (no waiting).
  c.expect_status(x.comm_create(nullptr, 2, 0, 0, 1000, &cm), FLAGOS_ERROR_INVALID_ARGUMENT, "comm_create(NULL id)");
  c.expect_status(x.comm_create(&id, 2, 0, 0, 1000, nullptr), FLAGOS_ERROR_INVALID_ARGUMENT, "comm_create(NULL comm)");
  c.expect_status(x.comm_create(&id, 2, 2, 0, 1000, &cm), FLAGOS_ERROR_INVALID_ARGUMENT, "comm_create(rank 2 of 2)");
  c.expect_status(x.comm_create(&id, 2, -1, 0, 1000, &cm), FLAGOS_ERROR_INVALID_ARGUMENT, "comm_create(rank -1)");
  c.expect_status(x.comm_create(&id, 0, 0, 0, 1000, &cm), FLAGOS_ERROR_INVALID_ARGUMENT, "comm_create(0 ranks)");
  c.expect_status(x.comm_create(&id, 2, 0, c.device_count, 1000, &cm), FLAGOS_ERROR_INVALID_DEVICE,
                  "comm_create(bad device)");
  c.expect_status(x.comm_id_create(nullptr), FLAGOS_ERROR_INVALID_ARGUMENT, "comm_id_create(NULL)");
  // Two ranks where they fit (rank 1 never calls, so anything enqueued by
  // mistake stays pending); else one, whose stray work would just complete.
  std::string why;
  const int n = ranks_fit(c, x, 2, &why) ? 2 : 1;
  flagos_comm_t cms[2] = {nullptr, nullptr};
  flagos_status_t created[2] = {FLAGOS_SUCCESS, FLAGOS_SUCCESS};
  {
    std::thread t1([&] { if (n == 2) created[1] = x.comm_create(&id, 2, 1, 1 % c.device_count, 10000, &cms[1]); });
    created[0] = x.comm_create(&id, n, 0, 0, 10000, &cms[0]);
    t1.join();
  }
  c.ok(created[0], "comm_create(rank 0)");
  c.ok(created[1], "comm_create(rank 1)");
  flagos_comm_t k = cms[0];
  Stream s(c, 0);
  DevBuf a(c, 0, 4096), b(c, 0, 4096);
  const flagos_dtype_t f32 = kTypes[0].dt, i32 = kTypes[6].dt;
  const flagos_dtype_t c64{FLAGOS_DTYPE_COMPLEX, 64, 1};
  auto bad = [&](flagos_status_t got, const char* what) {
    c.expect(got == FLAGOS_ERROR_INVALID_ARGUMENT || got == FLAGOS_ERROR_INVALID_HANDLE,
             strf("%s returned %s, expected INVALID_ARGUMENT or INVALID_HANDLE", what, st(got).c_str()));
  };
  bad(x.all_reduce(a.get(), b.get(), 16, f32, FLAGOS_REDUCE_SUM, nullptr, s.get()), "all_reduce(NULL comm)");
  bad(x.all_reduce(a.get(), b.get(), 16, f32, FLAGOS_REDUCE_SUM, k, nullptr), "all_reduce(NULL stream)");
  c.expect_status(x.all_reduce(nullptr, b.get(), 16, f32, FLAGOS_REDUCE_SUM, k, s.get()),
                  FLAGOS_ERROR_INVALID_ARGUMENT, "all_reduce(NULL send)");
  c.expect_status(x.all_reduce(a.get(), nullptr, 16, f32, FLAGOS_REDUCE_SUM, k, s.get()),
                  FLAGOS_ERROR_INVALID_ARGUMENT, "all_reduce(NULL recv)");
  c.expect_status(x.all_reduce(a.get(), b.get(), 16, f32, 99, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "all_reduce(op 99)");
  c.expect_status(x.all_reduce(a.get(), b.get(), 16, f32, -1, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "all_reduce(op -1)");
  c.expect_status(x.all_reduce(a.get(), b.get(), 16, c64, FLAGOS_REDUCE_SUM, k, s.get()), FLAGOS_ERROR_UNSUPPORTED,
                  "all_reduce(complex64)");
  if (x.reduce_ops & (1u << FLAGOS_REDUCE_AVG))
    c.expect_status(x.all_reduce(a.get(), b.get(), 16, i32, FLAGOS_REDUCE_AVG, k, s.get()),
                    FLAGOS_ERROR_UNSUPPORTED, "all_reduce(int32, AVG)");
  c.expect_status(x.broadcast(a.get(), b.get(), 16, f32, n, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "broadcast(root nranks)");
  c.expect_status(x.reduce(a.get(), b.get(), 16, f32, FLAGOS_REDUCE_SUM, -1, k, s.get()),
                  FLAGOS_ERROR_INVALID_ARGUMENT, "reduce(root -1)");
  c.expect_status(x.send(a.get(), 16, f32, 5, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT, "send(peer 5)");
  c.expect_status(x.recv(b.get(), 16, f32, -1, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT, "recv(peer -1)");
  c.expect_status(x.all_gather(a.get(), b.get(), 4096, f32, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT,
                  "all_gather(recv smaller than count)");
  c.expect_status(x.reduce_scatter(a.get(), b.get(), 1024, c64, FLAGOS_REDUCE_SUM, k, s.get()),
                  FLAGOS_ERROR_UNSUPPORTED, "reduce_scatter(complex64)");
  if (c.device_count >= 2) {
    Stream other(c, 1);
    c.expect_status(x.all_reduce(a.get(), b.get(), 16, f32, FLAGOS_REDUCE_SUM, k, other.get()),
                    FLAGOS_ERROR_INVALID_ARGUMENT, "all_reduce on a stream of another device");
  }
  flagos_status_t ge = x.group_end();
  c.expect(ge != FLAGOS_SUCCESS, "group_end without group_start succeeded");
  // A bad call inside a group is refused and not recorded.
  c.ok(x.group_start(), "group_start");
  c.expect_status(x.send(a.get(), 16, f32, 7, k, s.get()), FLAGOS_ERROR_INVALID_ARGUMENT, "send(peer 7) in a group");
  c.ok(x.group_end(), "group_end of a group with nothing recorded");
  sleep_ms(20);
  c.expect_status(c.api->stream_query(s.get()), FLAGOS_SUCCESS,
                  "stream_query after the refused calls (something was enqueued)");
  c.expect_status(x.comm_status(k), FLAGOS_SUCCESS, "comm_status after refused calls");
  x.comm_abort(k);  // in case something was enqueued after all
  c.api->stream_synchronize(s.get());
  c.expect_status(x.comm_destroy(cms[0]), FLAGOS_SUCCESS, "comm_destroy(rank 0)");
  c.expect_status(x.comm_destroy(cms[1]), FLAGOS_SUCCESS, "comm_destroy(rank 1)");
  if (n == 1) c.note("with one rank: " + why);
}

}  // namespace

Group collectives_group() {
  Group g("collectives", "FLAGOS_EXTENSION_COLLECTIVES: every op and dtype, groups, abort, timeouts");
  g.add("extension-table", extension_table)
      .add("ids-and-status", ids_and_status)
      .add("one-rank", [](Ctx& c) { ranks_check(c, 1); })
      .add("two-ranks", [](Ctx& c) { ranks_check(c, 2); })
      .add("three-ranks", [](Ctx& c) { ranks_check(c, 3); })
      .add("in-place", in_place)
      .add("large-counts", large)
      .add("p2p-ring-in-group", p2p_ring)
      .add("abort-unblocks-waiter", abort_unblocks)
      .add("create-timeout", create_timeout)
      .add("argument-errors", argument_errors);
  return g;
}

}  // namespace conformance
