// The vendor's NCCL-shaped communicator library (NCCL, RCCL, MCCL) as a table
// of function pointers, declared here with nccl.h's signatures (handles as
// void*, enums as int) so that no SDK header is needed to build. Opened at
// the first collectives call, never at the handshake: a plugin whose vendor
// library is missing still loads, and its collectives report why.
#pragma once

#include <cstddef>
#include <string>

#include "flagos/abi.h"
#include "runtime.h"

namespace flagos_cudalike {

using nccl_comm = void*;

// ncclUniqueId: opaque bytes, 128 of them (NCCL_UNIQUE_ID_BYTES), passed by value.
struct NcclUniqueId {
  char internal[128];
};

// ncclConfig_t's head as NCCL 2.14 defines it. NCCL copies `size` bytes and
// gives every member newer than `version` its default, so this prefix is
// all that a non-blocking init needs to set.
struct NcclConfig {
  size_t size;
  unsigned magic;    // NCCL_API_MAGIC
  unsigned version;  // NCCL_VERSION(2, 14, 0)
  int blocking;
};

// X(member, symbol suffix, required, return type, parameters): the symbol is
// the vendor's communicator prefix + suffix ("nccl" + "AllReduce").
#define FLAGOS_CUDALIKE_COMM_CALLS(X)                                                                 \
  X(get_unique_id, "GetUniqueId", 1, int, (NcclUniqueId*))                                             \
  X(comm_init_rank, "CommInitRank", 1, int, (nccl_comm*, int, NcclUniqueId, int))                      \
  X(comm_init_rank_config, "CommInitRankConfig", 0, int, (nccl_comm*, int, NcclUniqueId, int, NcclConfig*)) \
  X(comm_abort, "CommAbort", 1, int, (nccl_comm))                                                      \
  X(comm_destroy, "CommDestroy", 1, int, (nccl_comm))                                                  \
  X(comm_get_async_error, "CommGetAsyncError", 1, int, (nccl_comm, int*))                              \
  X(all_reduce, "AllReduce", 1, int, (const void*, void*, size_t, int, int, nccl_comm, rt_stream))     \
  X(broadcast, "Broadcast", 1, int, (const void*, void*, size_t, int, int, nccl_comm, rt_stream))      \
  X(reduce, "Reduce", 1, int, (const void*, void*, size_t, int, int, int, nccl_comm, rt_stream))       \
  X(all_gather, "AllGather", 1, int, (const void*, void*, size_t, int, nccl_comm, rt_stream))          \
  X(reduce_scatter, "ReduceScatter", 1, int, (const void*, void*, size_t, int, int, nccl_comm, rt_stream)) \
  X(send, "Send", 1, int, (const void*, size_t, int, int, nccl_comm, rt_stream))                       \
  X(recv, "Recv", 1, int, (void*, size_t, int, int, nccl_comm, rt_stream))                             \
  X(group_start, "GroupStart", 1, int, (void))                                                         \
  X(group_end, "GroupEnd", 1, int, (void))                                                             \
  X(get_error_string, "GetErrorString", 0, const char*, (int))                                         \
  X(get_last_error, "GetLastError", 0, const char*, (nccl_comm))                                       \
  X(get_version, "GetVersion", 0, int, (int*))

// ncclResult_t values (nccl.h), the same in RCCL and MCCL.
enum NcclResult : int {
  kNcclSuccess = 0,
  kNcclUnhandledCudaError = 1,
  kNcclSystemError = 2,
  kNcclInternalError = 3,
  kNcclInvalidArgument = 4,
  kNcclInvalidUsage = 5,
  kNcclRemoteError = 6,
  kNcclInProgress = 7,
  kNcclTimeout = 8,
};

struct CommLibrary {
#define FLAGOS_CUDALIKE_COMM_MEMBER(member, suffix, required, ret, params) ret(*member) params = nullptr;
  FLAGOS_CUDALIKE_COMM_CALLS(FLAGOS_CUDALIKE_COMM_MEMBER)
#undef FLAGOS_CUDALIKE_COMM_MEMBER
  std::string path;      // the library opened, for messages
  std::string found_by;  // already loaded, folder, system path
  int version = 0;       // NCCL_VERSION code (e.g. 22703), 0 when the library does not say
};

// Whether this vendor has a communicator library at all (Vendor::comm).
bool has_comm_library();

// The resolved library, opened at the first call; nullptr with a last-error
// message (RUNTIME_UNAVAILABLE, naming `fn`, the library and what was
// searched, or the first missing symbol) when it cannot be used.
const CommLibrary* load_comm_library(const char* fn, flagos_status_t* status);
// The library if an earlier load succeeded, else nullptr. Never opens it.
const CommLibrary* loaded_comm_library();

// The flagos status of an ncclResult_t, and "<fn>: <call> failed: <text>"
// recorded as the last error; `comm` (may be null) adds NCCL's last message.
flagos_status_t comm_status_of(int result);
flagos_status_t comm_fail(const char* fn, const char* call, int result, nccl_comm comm);

}  // namespace flagos_cudalike
