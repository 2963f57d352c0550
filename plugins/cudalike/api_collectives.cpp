// FLAGOS_EXTENSION_COLLECTIVES over the vendor's NCCL-shaped library
// (comm_library.h): argument checks before anything is enqueued, then one
// library call on the flagos stream's runtime stream. The library is opened
// at the first call; without it every call answers RUNTIME_UNAVAILABLE
// saying what was searched, and the core serves its groups on gloo.
#include <cstring>
#include <memory>
#include <string>

#include "api.h"
#include "comm.h"
#include "comm_types.h"
#include "devices.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "handles.h"
#include "pointers.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::need;

enum class Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

// The calling thread's open group: its depth, and the communicator its
// calls use (one per group), whose lock group_end takes.
struct Group {
  int depth = 0;
  std::shared_ptr<Comm> comm;
};
thread_local Group t_group;

int library_version() {
  const CommLibrary* lib = loaded_comm_library();
  return lib != nullptr ? lib->version : 0;
}

// [p, p + bytes) as device memory of `device`; the size is checked where the
// plugin's table knows the block.
flagos_status_t buffer(const char* fn, const char* what, const void* p, uint64_t bytes, int32_t device) {
  if (p == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
  flagos_status_t st = expect_device(fn, what, p, device);
  if (st != FLAGOS_SUCCESS) return st;
  const size_t room = block_room(p);
  if (room != 0 && room < bytes)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p holds %zu bytes, the call needs %llu", fn, what, p, room,
                static_cast<unsigned long long>(bytes));
  return FLAGOS_SUCCESS;
}

// A validated call: what the library call needs.
struct Call {
  const CommLibrary* lib = nullptr;
  std::shared_ptr<Comm> comm;
  std::shared_ptr<Stream> stream;
  CommType type{};
  int op = 0;
};

// Every check before anything is enqueued. Errors: INVALID_HANDLE (comm,
// stream), INVALID_ARGUMENT (a stream of another device, a bad op, root or
// peer, a buffer that is not memory of the comm's device or too small),
// UNSUPPORTED (a dtype or reduction the library lacks), the sticky error.
flagos_status_t prepare(const char* fn, Kind kind, const void* send, const void* recv, uint64_t count,
                        flagos_dtype_t dtype, int32_t op, int32_t root, flagos_comm_t comm, flagos_stream_t stream,
                        Call* out) {
  flagos_status_t st = comms().find(fn, comm, &out->comm);
  if (st == FLAGOS_SUCCESS) st = streams().find(fn, stream, &out->stream);
  if (st != FLAGOS_SUCCESS) return st;
  out->lib = loaded_comm_library();  // a communicator exists, so the library is open
  const Comm& c = *out->comm;
  if (out->stream->device() != c.device())
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: stream %p is on device %d, the communicator on device %d", fn,
                static_cast<void*>(stream), out->stream->device(), c.device());
  if (!comm_type_of(dtype, out->lib->version, &out->type))
    return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: dtype (code %u, bits %u, lanes %u) is not supported by %s", fn,
                dtype.code, dtype.bits, dtype.lanes, out->lib->path.c_str());
  if (kind == Kind::kAllReduce || kind == Kind::kReduce || kind == Kind::kReduceScatter) {
    if (op < FLAGOS_REDUCE_SUM || op > FLAGOS_REDUCE_AVG)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: unknown reduction %d", fn, op);
    if (!comm_op_of(op, out->type, out->lib->version, &out->op))
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: AVG takes floating types only, on NCCL 2.10 or later", fn);
  }
  const bool rooted = kind == Kind::kBroadcast || kind == Kind::kReduce || kind == Kind::kSend || kind == Kind::kRecv;
  if (rooted && (root < 0 || root >= c.nranks()))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %d is not a rank of this %d-rank communicator", fn,
                kind == Kind::kSend || kind == Kind::kRecv ? "peer" : "root", root, c.nranks());
  const uint64_t n = static_cast<uint64_t>(c.nranks());
  if (count > UINT64_MAX / out->type.size / n)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: count %llu is too large", fn, static_cast<unsigned long long>(count));
  st = out->comm->status(fn);  // a broken communicator takes no more work
  if (st != FLAGOS_SUCCESS || count == 0) return st;
  const uint64_t bytes = count * out->type.size;
  const int32_t dev = c.device();
  const bool root_here = c.rank() == root;
  switch (kind) {
    case Kind::kAllReduce: st = buffer(fn, "send", send, bytes, dev); break;
    case Kind::kBroadcast: st = root_here ? buffer(fn, "send", send, bytes, dev) : FLAGOS_SUCCESS; break;
    case Kind::kReduce: st = buffer(fn, "send", send, bytes, dev); break;
    case Kind::kAllGather: st = buffer(fn, "send", send, bytes, dev); break;
    case Kind::kReduceScatter: st = buffer(fn, "send", send, bytes * n, dev); break;
    case Kind::kSend: return buffer(fn, "buf", send, bytes, dev);
    case Kind::kRecv: return buffer(fn, "buf", recv, bytes, dev);
  }
  if (st != FLAGOS_SUCCESS || (kind == Kind::kReduce && !root_here)) return st;
  return buffer(fn, "recv", recv, kind == Kind::kAllGather ? bytes * n : bytes, dev);
}

// Checks the call, then enqueues it with `issue(call, native stream)`.
template <class Issue>
flagos_status_t run(const char* fn, const char* what, Kind kind, const void* send, const void* recv, uint64_t count,
                    flagos_dtype_t dtype, int32_t op, int32_t root, flagos_comm_t comm, flagos_stream_t stream,
                    Issue&& issue) {
  return guarded(fn, [&] {
    Call c;
    flagos_status_t st = prepare(fn, kind, send, recv, count, dtype, op, root, comm, stream, &c);
    if (st != FLAGOS_SUCCESS || count == 0) return st;
    Group& g = t_group;
    if (g.depth > 0 && g.comm && g.comm != c.comm)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: every call in a group must use one communicator", fn);
    DeviceScope scope;
    rt_stream native = nullptr;
    st = c.stream->enter(fn, scope, &native);
    if (st != FLAGOS_SUCCESS) return st;
    st = c.comm->issue(fn, what, [&](nccl_comm nc) { return issue(c, nc, native); });
    if (st == FLAGOS_SUCCESS && g.depth > 0) g.comm = c.comm;
    return st;
  });
}

// ---- the table ---------------------------------------------------------------

int32_t api_supports_dtype(flagos_dtype_t dtype) {
  CommType t;
  return comm_type_of(dtype, library_version(), &t) ? 1 : 0;
}

flagos_status_t api_comm_id_create(flagos_comm_id_t* id) {
  static const char* fn = "comm_id_create";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, id, "id");
    const CommLibrary* lib = st == FLAGOS_SUCCESS ? load_comm_library(fn, &st) : nullptr;
    if (lib == nullptr) return st;
    NcclUniqueId uid{};
    const int result = lib->get_unique_id(&uid);
    if (result != kNcclSuccess) return comm_fail(fn, "GetUniqueId", result, nullptr);
    std::memcpy(id->bytes, uid.internal, sizeof id->bytes);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_comm_create(const flagos_comm_id_t* id, int32_t nranks, int32_t rank, flagos_device_t device,
                                uint64_t timeout_ms, flagos_comm_t* comm) {
  static const char* fn = "comm_create";
  return guarded(fn, [&] {
    flagos_status_t st = flagos::kit::check_comm_create(fn, id, comm, nranks, rank, INT32_MAX);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    const CommLibrary* lib = load_comm_library(fn, &st);
    if (lib == nullptr) return st;
    DeviceScope scope;  // the library joins on the current device
    st = scope.enter(fn, device);
    std::shared_ptr<Comm> c;
    if (st == FLAGOS_SUCCESS) st = Comm::create(fn, *lib, *id, nranks, rank, device, timeout_ms, &c);
    if (st == FLAGOS_SUCCESS) *comm = comms().add(std::move(c));
    return st;
  });
}

flagos_status_t api_comm_destroy(flagos_comm_t comm) {
  static const char* fn = "comm_destroy";
  return guarded(fn, [&] {
    if (comm == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Comm> c;
    flagos_status_t st = comms().take(fn, comm, &c);
    if (st != FLAGOS_SUCCESS) return st;
    DeviceScope scope;  // the library releases device resources of the comm's device
    st = scope.enter(fn, c->device());
    c.reset();
    return st;
  });
}

// Looks `comm` up and runs `body(Comm&)` on it.
template <class Body>
flagos_status_t on_comm(const char* fn, flagos_comm_t comm, Body&& body) {
  return guarded(fn, [&] {
    std::shared_ptr<Comm> c;
    const flagos_status_t st = comms().find(fn, comm, &c);
    return st != FLAGOS_SUCCESS ? st : body(*c);
  });
}

flagos_status_t api_comm_abort(flagos_comm_t comm) {
  return on_comm("comm_abort", comm, [](Comm& c) {
    c.abort("comm_abort was called on rank " + std::to_string(c.rank()));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_comm_status(flagos_comm_t comm) {
  return on_comm("comm_status", comm, [](Comm& c) { return c.status("comm_status"); });
}

flagos_status_t api_all_reduce(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype, int32_t op,
                               flagos_comm_t comm, flagos_stream_t stream) {
  return run("all_reduce", "AllReduce", Kind::kAllReduce, send, recv, count, dtype, op, 0, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) {
               return c.lib->all_reduce(send, recv, count, c.type.nccl, c.op, nc, s);
             });
}

flagos_status_t api_broadcast(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype, int32_t root,
                              flagos_comm_t comm, flagos_stream_t stream) {
  return run("broadcast", "Broadcast", Kind::kBroadcast, send, recv, count, dtype, 0, root, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) {
               return c.lib->broadcast(send, recv, count, c.type.nccl, root, nc, s);
             });
}

flagos_status_t api_reduce(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype, int32_t op,
                           int32_t root, flagos_comm_t comm, flagos_stream_t stream) {
  return run("reduce", "Reduce", Kind::kReduce, send, recv, count, dtype, op, root, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) {
               return c.lib->reduce(send, recv, count, c.type.nccl, c.op, root, nc, s);
             });
}

flagos_status_t api_all_gather(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                               flagos_comm_t comm, flagos_stream_t stream) {
  return run("all_gather", "AllGather", Kind::kAllGather, send, recv, count, dtype, 0, 0, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) {
               return c.lib->all_gather(send, recv, count, c.type.nccl, nc, s);
             });
}

flagos_status_t api_reduce_scatter(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype, int32_t op,
                                   flagos_comm_t comm, flagos_stream_t stream) {
  return run("reduce_scatter", "ReduceScatter", Kind::kReduceScatter, send, recv, count, dtype, op, 0, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) {
               return c.lib->reduce_scatter(send, recv, count, c.type.nccl, c.op, nc, s);
             });
}

flagos_status_t api_send(const void* buf, uint64_t count, flagos_dtype_t dtype, int32_t peer, flagos_comm_t comm,
                         flagos_stream_t stream) {
  return run("send", "Send", Kind::kSend, buf, nullptr, count, dtype, 0, peer, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) { return c.lib->send(buf, count, c.type.nccl, peer, nc, s); });
}

flagos_status_t api_recv(void* buf, uint64_t count, flagos_dtype_t dtype, int32_t peer, flagos_comm_t comm,
                         flagos_stream_t stream) {
  return run("recv", "Recv", Kind::kRecv, nullptr, buf, count, dtype, 0, peer, comm, stream,
             [&](const Call& c, nccl_comm nc, rt_stream s) { return c.lib->recv(buf, count, c.type.nccl, peer, nc, s); });
}

// The library's own groups nest per thread as these do; group_end runs the
// outermost one under its communicator's lock, as every other call.
flagos_status_t api_group_start() {
  static const char* fn = "group_start";
  return guarded(fn, [&] {
    flagos_status_t st;
    const CommLibrary* lib = load_comm_library(fn, &st);
    if (lib == nullptr) return st;
    const int result = lib->group_start();
    if (result != kNcclSuccess) return comm_fail(fn, "GroupStart", result, nullptr);
    ++t_group.depth;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_group_end() {
  static const char* fn = "group_end";
  return guarded(fn, [&] {
    Group& g = t_group;
    if (g.depth == 0) return fail(FLAGOS_ERROR_INVALID_STATE, "%s: no group_start on this thread", fn);
    const CommLibrary& lib = *loaded_comm_library();  // group_start opened it
    std::shared_ptr<Comm> comm = --g.depth == 0 ? std::move(g.comm) : nullptr;
    if (g.depth == 0) g = Group{};
    if (comm == nullptr) {
      const int result = lib.group_end();
      return result == kNcclSuccess ? FLAGOS_SUCCESS : comm_fail(fn, "GroupEnd", result, nullptr);
    }
    DeviceScope scope;
    flagos_status_t st = scope.enter(fn, comm->device());
    return st != FLAGOS_SUCCESS ? st : comm->end_group(fn);
  });
}

}  // namespace

const flagos_extension_t* collectives_extension() {
  if (!has_comm_library()) return testing_extension();
  static const flagos_collectives_ext_t ext = {
      {sizeof(flagos_collectives_ext_t), FLAGOS_EXTENSION_COLLECTIVES, FLAGOS_COLLECTIVES_EXT_VERSION,
       testing_extension()},
      (1u << FLAGOS_REDUCE_SUM) | (1u << FLAGOS_REDUCE_PROD) | (1u << FLAGOS_REDUCE_MIN) | (1u << FLAGOS_REDUCE_MAX) |
          (1u << FLAGOS_REDUCE_AVG),
      api_supports_dtype, api_comm_id_create, api_comm_create, api_comm_destroy, api_comm_abort, api_comm_status,
      api_all_reduce, api_broadcast, api_reduce, api_all_gather, api_reduce_scatter, api_send, api_recv,
      api_group_start, api_group_end};
  return &ext.base;
}

}  // namespace flagos_cudalike
