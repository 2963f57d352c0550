// Every collective is a loop of chunks, and every chunk one step of the same
// discipline, which is what makes one set of per-rank sequence counters
// enough (no per-chunk allocation, no double buffering):
//   A. write only this rank's own slot (broadcast: the root, all slots);
//      post phase 0 of the step;
//   B. after the phase-0 posts it needs: read the slots, write outputs and
//      this rank's part of the result area; post phase 1; wait for every
//      rank's phase 1;
//   C. read the result area only.
// A rank starts step s+1 (writing its slot) only once everyone finished
// reading slots in step s, and writes the result area in step s+1 only after
// everyone posted phase 0 of s+1, i.e. finished reading it in step s.
#include "comm_ops.h"

#include <algorithm>
#include <cstring>

#include "kit.h"

namespace flagos_host {
namespace {


// A chunk's elements split into nranks shares of `share` (the last ones
// shorter or empty): share j is [begin(j), end(j)).
struct Shares {
  uint64_t len, share;
  uint64_t begin(int32_t j) const { return std::min(len, share * static_cast<uint64_t>(j)); }
  uint64_t size(int32_t j) const { return std::min(len, begin(j) + share) - begin(j); }
};

// all_reduce and reduce: each rank reduces one share of the chunk over every
// rank's data (its own straight from `send`, the others' from their slots),
// so each element is reduced once and each rank stages only the shares of
// the others: with 2 ranks, half the buffer crosses the segment each way.
flagos_status_t reduce_family(Comm& c, const CommOp& o, bool to_all) {
  const char* fn = to_all ? "all_reduce" : "reduce";
  const int32_t n = c.nranks(), r = c.rank();
  const size_t esz = comm_type_size(o.type);
  const bool writes_recv = to_all || r == o.root;
  const uint64_t chunk = (c.slot_bytes() / esz) / n * n;
  std::vector<const void*> srcs(n);
  for (uint64_t off = 0; off < o.count; off += chunk) {
    Shares sh{std::min(chunk, o.count - off), 0};
    sh.share = (sh.len + n - 1) / n;
    const uint64_t step = c.next_step();
    const uint8_t* send = o.send.addr + off * esz;
    for (int32_t j = 0; j < n; ++j)  // A: stage the others' shares
      if (j != r)
        std::memcpy(c.slot(r) + sh.begin(j) * esz, send + sh.begin(j) * esz, sh.size(j) * esz);
    c.post(0, step);
    flagos_status_t st = c.wait_all(fn, 0, step);
    if (st != FLAGOS_SUCCESS) return st;
    // B: reduce this rank's share in rank order (every rank gets the same bits)
    for (int32_t j = 0; j < n; ++j)
      srcs[j] = j == r ? send + sh.begin(r) * esz : c.slot(j) + sh.begin(r) * esz;
    uint8_t* shared = c.result() + sh.begin(r) * esz;
    if (writes_recv) {
      uint8_t* dst = o.recv.addr + (off + sh.begin(r)) * esz;
      reduce_arrays(o.type, o.op, dst, srcs.data(), n, sh.size(r), n);
      if (n > 1) std::memcpy(shared, dst, sh.size(r) * esz);
    } else {
      reduce_arrays(o.type, o.op, shared, srcs.data(), n, sh.size(r), n);
    }
    c.post(1, step);
    if ((st = c.wait_all(fn, 1, step)) != FLAGOS_SUCCESS) return st;
    if (!writes_recv) continue;
    for (int32_t j = 0; j < n; ++j)  // C: the others' shares of the result
      if (j != r)
        std::memcpy(o.recv.addr + (off + sh.begin(j)) * esz, c.result() + sh.begin(j) * esz,
                    sh.size(j) * esz);
  }
  return FLAGOS_SUCCESS;
}

// The root stages a chunk as large as all the slots together; the others
// copy it out.
flagos_status_t broadcast(Comm& c, const CommOp& o) {
  static const char* fn = "broadcast";
  const int32_t r = c.rank();
  const size_t esz = comm_type_size(o.type);
  const uint64_t chunk = c.slot_bytes() * c.nranks() / esz;
  uint8_t* staging = c.slot(0);  // the slots are contiguous
  for (uint64_t off = 0; off < o.count; off += chunk) {
    const uint64_t bytes = std::min(chunk, o.count - off) * esz;
    const uint64_t step = c.next_step();
    if (r == o.root) {
      if (c.nranks() > 1) std::memcpy(staging, o.send.addr + off * esz, bytes);
      if (o.recv.addr != o.send.addr) std::memcpy(o.recv.addr + off * esz, o.send.addr + off * esz, bytes);
    }
    c.post(0, step);
    flagos_status_t st = c.wait_rank(fn, o.root, 0, step);
    if (st != FLAGOS_SUCCESS) return st;
    if (r != o.root) std::memcpy(o.recv.addr + off * esz, staging, bytes);
    c.post(1, step);
    if ((st = c.wait_all(fn, 1, step)) != FLAGOS_SUCCESS) return st;
  }
  return FLAGOS_SUCCESS;
}

flagos_status_t all_gather(Comm& c, const CommOp& o) {
  static const char* fn = "all_gather";
  const int32_t n = c.nranks(), r = c.rank();
  const size_t esz = comm_type_size(o.type);
  const uint64_t chunk = c.slot_bytes() / esz;
  uint8_t* own = o.recv.addr + static_cast<uint64_t>(r) * o.count * esz;
  for (uint64_t off = 0; off < o.count; off += chunk) {
    const uint64_t bytes = std::min(chunk, o.count - off) * esz;
    const uint64_t step = c.next_step();
    if (n > 1) std::memcpy(c.slot(r), o.send.addr + off * esz, bytes);
    if (own != o.send.addr) std::memmove(own + off * esz, o.send.addr + off * esz, bytes);
    c.post(0, step);
    flagos_status_t st = c.wait_all(fn, 0, step);
    if (st != FLAGOS_SUCCESS) return st;
    for (int32_t j = 0; j < n; ++j)
      if (j != r)
        std::memcpy(o.recv.addr + (static_cast<uint64_t>(j) * o.count + off) * esz, c.slot(j), bytes);
    c.post(1, step);
    if ((st = c.wait_all(fn, 1, step)) != FLAGOS_SUCCESS) return st;
  }
  return FLAGOS_SUCCESS;
}

// Each slot holds one sub-slot per destination rank; rank r reduces block r.
flagos_status_t reduce_scatter(Comm& c, const CommOp& o) {
  static const char* fn = "reduce_scatter";
  const int32_t n = c.nranks(), r = c.rank();
  const size_t esz = comm_type_size(o.type);
  const uint64_t chunk = c.slot_bytes() / n / esz;
  const uint64_t sub = chunk * esz;
  std::vector<const void*> srcs(n);
  for (uint64_t off = 0; off < o.count; off += chunk) {
    const uint64_t len = std::min(chunk, o.count - off);
    const uint64_t step = c.next_step();
    auto block = [&](int32_t j) { return o.send.addr + (static_cast<uint64_t>(j) * o.count + off) * esz; };
    for (int32_t j = 0; j < n; ++j)
      if (j != r) std::memcpy(c.slot(r) + j * sub, block(j), len * esz);
    c.post(0, step);
    flagos_status_t st = c.wait_all(fn, 0, step);
    if (st != FLAGOS_SUCCESS) return st;
    for (int32_t j = 0; j < n; ++j) srcs[j] = j == r ? block(r) : c.slot(j) + r * sub;
    reduce_arrays(o.type, o.op, o.recv.addr + off * esz, srcs.data(), n, len, n);
    c.post(1, step);
    if ((st = c.wait_all(fn, 1, step)) != FLAGOS_SUCCESS) return st;
  }
  return FLAGOS_SUCCESS;
}

// ---- point to point ------------------------------------------------------------
// A message on a ring is an 8-byte length, then the payload, so a receive of
// the wrong size is an error instead of a silent desynchronisation.

void ring_write(const Channel& ch, uint64_t pos, const uint8_t* src, uint64_t n) {
  const uint64_t at = pos % ch.size, first = std::min(n, ch.size - at);
  std::memcpy(ch.data + at, src, first);
  if (n > first) std::memcpy(ch.data, src + first, n - first);
}

void ring_read(const Channel& ch, uint64_t pos, uint8_t* dst, uint64_t n) {
  const uint64_t at = pos % ch.size, first = std::min(n, ch.size - at);
  std::memcpy(dst, ch.data + at, first);
  if (n > first) std::memcpy(dst + first, ch.data, n - first);
}

struct P2P {
  const CommOp* op;
  uint64_t bytes;     // payload
  uint64_t done = 0;  // of 8 + bytes
  uint64_t header = 0;
  bool finished() const { return done == 8 + bytes; }
};

// Moves what the ring allows; true when something moved.
bool send_some(Comm& c, P2P& p) {
  Channel ch = c.channel(c.rank(), p.op->root);
  const uint64_t head = *ch.head;  // only this rank writes it
  uint64_t room = ch.size - (head - load_acquire(ch.tail));
  if (room == 0) return false;
  uint64_t pos = head;
  while (room > 0 && !p.finished()) {
    uint64_t k;
    if (p.done < 8) {
      k = std::min(room, 8 - p.done);
      ring_write(ch, pos, reinterpret_cast<const uint8_t*>(&p.bytes) + p.done, k);
    } else {
      k = std::min(room, 8 + p.bytes - p.done);
      ring_write(ch, pos, p.op->send.addr + (p.done - 8), k);
    }
    p.done += k;
    pos += k;
    room -= k;
  }
  store_release(ch.head, pos);
  return true;
}

// As send_some; COMM when the sender's size is not this receive's.
flagos_status_t recv_some(Comm& c, P2P& p, bool* moved) {
  Channel ch = c.channel(p.op->root, c.rank());
  const uint64_t tail = *ch.tail;  // only this rank writes it
  uint64_t avail = load_acquire(ch.head) - tail;
  *moved = avail > 0;
  uint64_t pos = tail;
  while (avail > 0 && !p.finished()) {
    uint64_t k;
    if (p.done < 8) {
      k = std::min(avail, 8 - p.done);
      ring_read(ch, pos, reinterpret_cast<uint8_t*>(&p.header) + p.done, k);
      if (p.done + k == 8 && p.header != p.bytes)
        return fail(FLAGOS_ERROR_COMM,
                    "recv: rank %d sent %llu bytes but rank %d receives %llu (sizes of paired "
                    "send and recv differ)",
                    p.op->root, (unsigned long long)p.header, c.rank(), (unsigned long long)p.bytes);
    } else {
      k = std::min(avail, 8 + p.bytes - p.done);
      ring_read(ch, pos, p.op->recv.addr + (p.done - 8), k);
    }
    p.done += k;
    pos += k;
    avail -= k;
  }
  store_release(ch.tail, pos);
  return FLAGOS_SUCCESS;
}

}  // namespace

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kAllReduce: return "all_reduce";
    case OpKind::kBroadcast: return "broadcast";
    case OpKind::kReduce: return "reduce";
    case OpKind::kAllGather: return "all_gather";
    case OpKind::kReduceScatter: return "reduce_scatter";
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
  }
  return "?";
}

flagos_status_t run_collective(Comm& c, const CommOp& o) {
  switch (o.kind) {
    case OpKind::kAllReduce: return reduce_family(c, o, /*to_all=*/true);
    case OpKind::kReduce: return reduce_family(c, o, /*to_all=*/false);
    case OpKind::kBroadcast: return broadcast(c, o);
    case OpKind::kAllGather: return all_gather(c, o);
    case OpKind::kReduceScatter: return reduce_scatter(c, o);
    default: return fail(FLAGOS_ERROR_INTERNAL, "run_collective: %s is not a collective", op_kind_name(o.kind));
  }
}

flagos_status_t run_p2p(Comm& c, const std::vector<const CommOp*>& ops) {
  static const char* fn = "send/recv";
  std::vector<P2P> ps;
  ps.reserve(ops.size());
  for (const CommOp* o : ops) ps.push_back(P2P{o, o->count * comm_type_size(o->type)});
  const int32_t n = c.nranks();
  std::vector<char> busy(2 * static_cast<size_t>(n));  // [peer]: a send, [n + peer]: a recv
  uint64_t idle = 0;
  for (;;) {
    bool moved = false, pending = false;
    std::fill(busy.begin(), busy.end(), 0);
    for (P2P& p : ps) {
      if (p.finished()) continue;
      pending = true;
      const bool is_send = p.op->kind == OpKind::kSend;
      char& b = busy[(is_send ? 0 : n) + p.op->root];
      if (b) continue;  // an earlier message to/from this peer comes first
      b = 1;
      if (is_send) {
        moved = send_some(c, p) || moved;
      } else {
        bool m = false;
        flagos_status_t st = recv_some(c, p, &m);
        if (st != FLAGOS_SUCCESS) return st;
        moved = moved || m;
      }
    }
    if (!pending) return FLAGOS_SUCCESS;
    if (moved) {
      idle = 0;
      continue;
    }
    flagos_status_t st = c.idle_wait(fn, &idle);
    if (st != FLAGOS_SUCCESS) return st;
  }
}

}  // namespace flagos_host
