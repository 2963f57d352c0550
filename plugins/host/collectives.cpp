#include "collectives.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "api.h"
#include "capture.h"
#include "comm.h"
#include "comm_ops.h"
#include "devices.h"
#include "handles.h"
#include "kit.h"

namespace flagos_host {
namespace {

// A validated call, ready to record or enqueue.
struct Prepared {
  std::shared_ptr<Comm> comm;
  std::shared_ptr<Stream> stream;
  flagos_stream_t stream_handle = nullptr;
  CommOp op;
};

// The calling thread's open group (group_start ... group_end).
struct Group {
  int depth = 0;
  std::shared_ptr<Comm> comm;
  std::shared_ptr<Stream> stream;
  flagos_stream_t stream_handle = nullptr;
  std::vector<CommOp> ops;
};
thread_local Group t_group;

bool reduces(OpKind k) {
  return k == OpKind::kAllReduce || k == OpKind::kReduce || k == OpKind::kReduceScatter;
}

// Resolves [ptr, ptr + bytes) as memory of the communicator's device.
flagos_status_t buffer(const char* fn, const char* what, const void* ptr, uint64_t bytes,
                       int32_t device, Endpoint* out) {
  if (ptr == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
  return resolve_device(fn, what, ptr, bytes, device, out);
}

// Every check a call makes before it records or enqueues anything. Errors:
// INVALID_HANDLE (comm, stream), INVALID_ARGUMENT (a stream of another
// device, a bad op/root/peer, a buffer that is not device memory of the
// comm's device or too small, a size that overflows), UNSUPPORTED (a dtype
// the extension does not take, AVG on a non-floating type), and the
// communicator's sticky error.
flagos_status_t prepare(const char* fn, OpKind kind, const void* send, void* recv, uint64_t count,
                        flagos_dtype_t dtype, int32_t op, int32_t root, flagos_comm_t comm,
                        flagos_stream_t stream, Prepared* out) {
  flagos_status_t st = find_comm(fn, comm, &out->comm);
  if (st == FLAGOS_SUCCESS) st = find_stream(fn, stream, &out->stream);
  if (st != FLAGOS_SUCCESS) return st;
  Comm& c = *out->comm;
  if (out->stream->device() != c.device())
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: stream %p is on device %d, the communicator on device %d", fn, (void*)stream,
                out->stream->device(), c.device());
  CommOp& o = out->op;
  if (!comm_type_of(dtype, &o.type))
    return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: dtype (code %u, bits %u, lanes %u) is not supported",
                fn, dtype.code, dtype.bits, dtype.lanes);
  if (reduces(kind)) {
    if (op < FLAGOS_REDUCE_SUM || op > FLAGOS_REDUCE_AVG)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: unknown reduction %d", fn, op);
    if (op == FLAGOS_REDUCE_AVG && !comm_type_is_float(o.type))
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: AVG on %s: floating types only", fn,
                  comm_type_name(o.type));
  }
  const bool rooted = kind == OpKind::kBroadcast || kind == OpKind::kReduce ||
                      kind == OpKind::kSend || kind == OpKind::kRecv;
  if (rooted && (root < 0 || root >= c.nranks()))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %d is not a rank of this %d-rank communicator",
                fn, kind == OpKind::kSend || kind == OpKind::kRecv ? "peer" : "root", root,
                c.nranks());
  const uint64_t esz = comm_type_size(o.type), n = static_cast<uint64_t>(c.nranks());
  if (count > UINT64_MAX / esz / n)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: count %llu is too large", fn,
                (unsigned long long)count);
  st = c.status(fn);  // a broken communicator takes no more work
  if (st != FLAGOS_SUCCESS) return st;
  o.kind = kind;
  o.count = count;
  o.op = op;
  o.root = root;
  out->stream_handle = stream;
  if (count == 0) return FLAGOS_SUCCESS;  // nothing to touch; pointers may be NULL
  const uint64_t bytes = count * esz;
  const int32_t dev = c.device(), r = c.rank();
  switch (kind) {
    case OpKind::kAllReduce:
      st = buffer(fn, "send", send, bytes, dev, &o.send);
      if (st == FLAGOS_SUCCESS) st = buffer(fn, "recv", recv, bytes, dev, &o.recv);
      break;
    case OpKind::kBroadcast:
      if (r == root) st = buffer(fn, "send", send, bytes, dev, &o.send);
      if (st == FLAGOS_SUCCESS) st = buffer(fn, "recv", recv, bytes, dev, &o.recv);
      break;
    case OpKind::kReduce:
      st = buffer(fn, "send", send, bytes, dev, &o.send);
      if (st == FLAGOS_SUCCESS && r == root) st = buffer(fn, "recv", recv, bytes, dev, &o.recv);
      break;
    case OpKind::kAllGather:
      st = buffer(fn, "send", send, bytes, dev, &o.send);
      if (st == FLAGOS_SUCCESS) st = buffer(fn, "recv", recv, bytes * n, dev, &o.recv);
      break;
    case OpKind::kReduceScatter:
      st = buffer(fn, "send", send, bytes * n, dev, &o.send);
      if (st == FLAGOS_SUCCESS) st = buffer(fn, "recv", recv, bytes, dev, &o.recv);
      break;
    case OpKind::kSend:
      st = buffer(fn, "buf", send, bytes, dev, &o.send);
      break;
    case OpKind::kRecv:
      st = buffer(fn, "buf", recv, bytes, dev, &o.recv);
      break;
  }
  return st;
}

// Runs recorded operations as one stream task: collectives in call order,
// then every send and recv together. A failure breaks the communicator (its
// peers are told) and becomes the stream's sticky error.
Task make_task(std::shared_ptr<Comm> comm, std::vector<CommOp> ops) {
  return [comm = std::move(comm), ops = std::move(ops)]() -> flagos_status_t {
    const char* fn = op_kind_name(ops.front().kind);
    std::lock_guard<std::mutex> lock(comm->run_mutex());
    flagos_status_t st = comm->status(fn);
    if (st != FLAGOS_SUCCESS) return st;
    std::vector<const CommOp*> p2p;
    for (const CommOp& o : ops) {
      if (o.kind == OpKind::kSend || o.kind == OpKind::kRecv) {
        p2p.push_back(&o);
      } else if ((st = run_collective(*comm, o)) != FLAGOS_SUCCESS) {
        return comm->fail_op(st);
      }
    }
    if (!p2p.empty() && (st = run_p2p(*comm, p2p)) != FLAGOS_SUCCESS) return comm->fail_op(st);
    return FLAGOS_SUCCESS;
  };
}

// Collectives pair ranks by call order when they run: a replayed one would
// pair with nothing, so a capture refuses them.
flagos_status_t enqueue_op(const char* fn, Stream& stream, Task task) {
  if (std::shared_ptr<Capture> c = stream.capture())
    return c->invalidate(fn, "a collective (the host plugin does not capture collectives)");
  return stream.enqueue(fn, std::move(task));
}

// Records the call in the open group, or enqueues it on its own.
flagos_status_t submit(const char* fn, Prepared&& p) {
  Group& g = t_group;
  if (g.depth > 0) {
    if (g.comm && (g.comm != p.comm || g.stream != p.stream))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: every call in a group must use one communicator and one stream", fn);
    if (p.op.count == 0) return FLAGOS_SUCCESS;
    g.comm = p.comm;
    g.stream = p.stream;
    g.stream_handle = p.stream_handle;
    g.ops.push_back(std::move(p.op));
    return FLAGOS_SUCCESS;
  }
  if (p.op.count == 0) return FLAGOS_SUCCESS;
  std::vector<CommOp> ops;
  ops.push_back(std::move(p.op));
  return enqueue_op(fn, *p.stream, make_task(p.comm, std::move(ops)));
}

flagos_status_t call(const char* fn, OpKind kind, const void* send, void* recv, uint64_t count,
                     flagos_dtype_t dtype, int32_t op, int32_t root, flagos_comm_t comm,
                     flagos_stream_t stream) {
  return guarded(fn, [&] {
    Prepared p;
    flagos_status_t st = prepare(fn, kind, send, recv, count, dtype, op, root, comm, stream, &p);
    return st != FLAGOS_SUCCESS ? st : submit(fn, std::move(p));
  });
}

// ---- the table ---------------------------------------------------------------

int32_t api_supports_dtype(flagos_dtype_t dtype) {
  CommType t;
  return comm_type_of(dtype, &t) ? 1 : 0;
}

flagos_status_t api_comm_id_create(flagos_comm_id_t* id) {
  static const char* fn = "comm_id_create";
  return guarded(fn, [&] {
    flagos_status_t st = kit::need(fn, id, "id");
    return st != FLAGOS_SUCCESS ? st : Comm::make_id(fn, id);
  });
}

flagos_status_t api_comm_create(const flagos_comm_id_t* id, int32_t nranks, int32_t rank,
                                flagos_device_t device, uint64_t timeout_ms, flagos_comm_t* comm) {
  static const char* fn = "comm_create";
  return guarded(fn, [&] {
    flagos_status_t st = kit::check_comm_create(fn, id, comm, nranks, rank, 4096);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Comm> c;
    st = Comm::create(fn, *id, nranks, rank, device, timeout_ms, &c);
    if (st != FLAGOS_SUCCESS) return st;
    *comm = add_comm(std::move(c));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_comm_destroy(flagos_comm_t comm) {
  static const char* fn = "comm_destroy";
  return guarded(fn, [&] {
    if (comm == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Comm> c;
    // Pending tasks hold their own reference: the segment goes with the last.
    return remove_comm(fn, comm, &c);
  });
}

flagos_status_t api_comm_abort(flagos_comm_t comm) {
  static const char* fn = "comm_abort";
  return guarded(fn, [&] {
    std::shared_ptr<Comm> c;
    flagos_status_t st = find_comm(fn, comm, &c);
    if (st != FLAGOS_SUCCESS) return st;
    char why[96];
    std::snprintf(why, sizeof why, "comm_abort was called on rank %d", c->rank());
    c->abort(why);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_comm_status(flagos_comm_t comm) {
  static const char* fn = "comm_status";
  return guarded(fn, [&] {
    std::shared_ptr<Comm> c;
    flagos_status_t st = find_comm(fn, comm, &c);
    return st != FLAGOS_SUCCESS ? st : c->status(fn);
  });
}

flagos_status_t api_all_reduce(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                               int32_t op, flagos_comm_t comm, flagos_stream_t stream) {
  return call("all_reduce", OpKind::kAllReduce, send, recv, count, dtype, op, 0, comm, stream);
}

flagos_status_t api_broadcast(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                              int32_t root, flagos_comm_t comm, flagos_stream_t stream) {
  return call("broadcast", OpKind::kBroadcast, send, recv, count, dtype, FLAGOS_REDUCE_SUM, root,
              comm, stream);
}

flagos_status_t api_reduce(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                           int32_t op, int32_t root, flagos_comm_t comm, flagos_stream_t stream) {
  return call("reduce", OpKind::kReduce, send, recv, count, dtype, op, root, comm, stream);
}

flagos_status_t api_all_gather(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                               flagos_comm_t comm, flagos_stream_t stream) {
  return call("all_gather", OpKind::kAllGather, send, recv, count, dtype, FLAGOS_REDUCE_SUM, 0,
              comm, stream);
}

flagos_status_t api_reduce_scatter(const void* send, void* recv, uint64_t count,
                                   flagos_dtype_t dtype, int32_t op, flagos_comm_t comm,
                                   flagos_stream_t stream) {
  return call("reduce_scatter", OpKind::kReduceScatter, send, recv, count, dtype, op, 0, comm,
              stream);
}

flagos_status_t api_send(const void* buf, uint64_t count, flagos_dtype_t dtype, int32_t peer,
                         flagos_comm_t comm, flagos_stream_t stream) {
  return call("send", OpKind::kSend, buf, nullptr, count, dtype, FLAGOS_REDUCE_SUM, peer, comm,
              stream);
}

flagos_status_t api_recv(void* buf, uint64_t count, flagos_dtype_t dtype, int32_t peer,
                         flagos_comm_t comm, flagos_stream_t stream) {
  return call("recv", OpKind::kRecv, nullptr, buf, count, dtype, FLAGOS_REDUCE_SUM, peer, comm,
              stream);
}

flagos_status_t api_group_start() {
  ++t_group.depth;
  return FLAGOS_SUCCESS;
}

// Errors: INVALID_STATE without a matching group_start; an enqueue failure
// (the recorded calls are then dropped, nothing was enqueued).
flagos_status_t api_group_end() {
  static const char* fn = "group_end";
  return guarded(fn, [&] {
    Group& g = t_group;
    if (g.depth == 0)
      return fail(FLAGOS_ERROR_INVALID_STATE, "%s: no group_start on this thread", fn);
    if (--g.depth > 0) return FLAGOS_SUCCESS;
    Group done = std::move(g);
    g = Group{};
    if (done.ops.empty()) return FLAGOS_SUCCESS;
    return enqueue_op(fn, *done.stream, make_task(done.comm, std::move(done.ops)));
  });
}

flagos_collectives_ext_t make_ext() {
  flagos_collectives_ext_t e{};
  e.base.struct_size = sizeof(flagos_collectives_ext_t);
  e.base.type = FLAGOS_EXTENSION_COLLECTIVES;
  e.base.version = FLAGOS_COLLECTIVES_EXT_VERSION;
  e.base.next = testing_extension();
  e.reduce_ops = kReduceOps;
  e.supports_dtype = api_supports_dtype;
  e.comm_id_create = api_comm_id_create;
  e.comm_create = api_comm_create;
  e.comm_destroy = api_comm_destroy;
  e.comm_abort = api_comm_abort;
  e.comm_status = api_comm_status;
  e.all_reduce = api_all_reduce;
  e.broadcast = api_broadcast;
  e.reduce = api_reduce;
  e.all_gather = api_all_gather;
  e.reduce_scatter = api_reduce_scatter;
  e.send = api_send;
  e.recv = api_recv;
  e.group_start = api_group_start;
  e.group_end = api_group_end;
  return e;
}

}  // namespace

const flagos_extension_t* collectives_extension() {
  static const flagos_collectives_ext_t ext = make_ext();
  return &ext.base;
}

}  // namespace flagos_host
