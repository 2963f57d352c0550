// The algorithms of the collectives extension over a Comm's segment. Each
// runs inside a stream task, with the communicator's run mutex held, on
// buffers already validated and translated to plugin-accessible addresses.
#pragma once

#include <cstdint>
#include <vector>

#include "comm.h"
#include "copy.h"
#include "reduce.h"

namespace flagos_host {

enum class OpKind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

const char* op_kind_name(OpKind k);

// One recorded call. `send`/`recv` hold the blocks they point into, so the
// memory stays mapped until the task ran; an unused side has a null addr.
struct CommOp {
  OpKind kind = OpKind::kAllReduce;
  Endpoint send, recv;
  uint64_t count = 0;  // elements, as the caller passed it
  CommType type = CommType::kF32;
  int32_t op = FLAGOS_REDUCE_SUM;
  int32_t root = 0;  // broadcast/reduce root, or the peer of send/recv
};

// Runs one collective (not send/recv). Errors: COMM when the communicator is
// aborted, a peer is lost or leaves, with the reason as the last error.
flagos_status_t run_collective(Comm& c, const CommOp& op);

// Runs point-to-point operations together: each advances whenever its ring
// has room or data, so any pattern whose pairs match cannot deadlock. Per
// peer, sends (and receives) complete in list order. Errors: COMM as above,
// and when a receive's size differs from the matching send's.
flagos_status_t run_p2p(Comm& c, const std::vector<const CommOp*>& ops);

}  // namespace flagos_host
