/*
 * flagos/ext/collectives.h — FLAGOS_EXTENSION_COLLECTIVES (ABI 1.2): the
 * plugin's own communicator, NCCL-shaped, so that the "flagos" distributed
 * backend runs collectives on plugin streams without staging through the
 * host. Optional: a plugin without it gets the gloo tiers
 * (docs/distributed.md).
 *
 * Model. A communicator joins `nranks` processes (or threads), one device
 * each. Every operation is *enqueued* on a plugin stream of the
 * communicator's device and returns at once: it runs when the stream reaches
 * it, after the work enqueued before it, and work enqueued after it waits for
 * it (so events order it like any other stream work). Buffers are device
 * pointers of that device (host pointers on a host-addressable plugin) and
 * must stay allocated and unchanged until the operation completed on the
 * stream. All ranks call the same collectives in the same order; point-to-
 * point calls pair by (peer, order).
 *
 * Errors. A call that returns an error enqueued nothing. A failure while
 * running (a peer gone, comm_abort: FLAGOS_ERROR_COMM) makes the stream's later
 * queries and synchronisations report it, and comm_status report it from then on; the
 * communicator is then unusable, and comm_destroy is the only call left. (Over
 * a library whose kernels merely end when aborted, as NCCL's do, the stream
 * completes and comm_status alone reports it; the core asks comm_status once
 * an operation completed.)
 *
 * A missing library. A plugin opens its communicator library at first use,
 * never at the handshake, so it chains this extension whenever it may have
 * one. When the library cannot be used, comm_id_create (and comm_create,
 * group_start) return FLAGOS_ERROR_RUNTIME_UNAVAILABLE with a message naming
 * the library and what was searched; the core then serves the group on the
 * gloo tiers on every rank, with one line saying why. So it does when
 * comm_create answers FLAGOS_ERROR_UNSUPPORTED: the library refuses this set
 * of ranks (e.g. two on one device), on every rank alike.
 * Nothing blocks forever: a rank whose peer never arrives stays blocked on
 * the stream until comm_abort, which the core calls at the group's timeout.
 *
 * Threading. Every function is thread-safe unless stated; group_start and
 * group_end are per calling thread, like NCCL's.
 */
#ifndef FLAGOS_EXT_COLLECTIVES_H_
#define FLAGOS_EXT_COLLECTIVES_H_

#include "flagos/ext/kernels.h" /* flagos_dtype_t */
#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_COLLECTIVES_EXT_VERSION 0u

/* A communicator. Created by comm_create, released by comm_destroy. */
typedef struct flagos_comm_s* flagos_comm_t;

/* The rendezvous token: made once (by one rank) with comm_id_create, handed
 * to every rank by the core (through torch.distributed's store) as opaque
 * bytes, and passed to comm_create. */
#define FLAGOS_COMM_ID_BYTES 128
typedef struct flagos_comm_id {
  unsigned char bytes[FLAGOS_COMM_ID_BYTES];
} flagos_comm_id_t;

/* Reductions. A plugin lists the ones it implements in reduce_ops. */
#define FLAGOS_REDUCE_SUM 0
#define FLAGOS_REDUCE_PROD 1
#define FLAGOS_REDUCE_MIN 2
#define FLAGOS_REDUCE_MAX 3
#define FLAGOS_REDUCE_AVG 4 /* SUM divided by nranks; floating types only */

typedef struct flagos_collectives_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_COLLECTIVES */

  /* Bit (1u << FLAGOS_REDUCE_*) for each reduction implemented. */
  uint32_t reduce_ops;

  /* Whether collectives take `dtype` (e.g. no 64-bit types on some
   * vendors). A dtype it refuses makes the core fall back for that call. */
  int32_t (*supports_dtype)(flagos_dtype_t dtype);

  /* Makes a fresh rendezvous token. Called on one rank per communicator. */
  flagos_status_t (*comm_id_create)(flagos_comm_id_t* id);

  /* Joins the communicator named by `id` as `rank` of `nranks`, on `device`.
   * Blocks until every rank joined, or fails with FLAGOS_ERROR_TIMEOUT after
   * `timeout_ms` (0: the plugin's default, at most a few minutes). The
   * handle is caller-owned until comm_destroy. */
  flagos_status_t (*comm_create)(const flagos_comm_id_t* id, int32_t nranks, int32_t rank,
                                 flagos_device_t device, uint64_t timeout_ms, flagos_comm_t* comm);

  /* Releases the communicator once the operations enqueued on it completed
   * (or failed). Never blocks on a peer. */
  flagos_status_t (*comm_destroy)(flagos_comm_t comm);

  /* Fails every pending and later operation of `comm` on every rank that can
   * be told (the others fail when they next wait on this one); returns at
   * once. Callable from any thread, including while another thread is
   * blocked on the communicator's stream. */
  flagos_status_t (*comm_abort)(flagos_comm_t comm);

  /* FLAGOS_SUCCESS while the communicator works; else the error that broke
   * it (FLAGOS_ERROR_COMM after comm_abort or a lost peer, FLAGOS_ERROR_TIMEOUT
   * after a peer that never arrived), with last_error_message saying why.
   * Never blocks. */
  flagos_status_t (*comm_status)(flagos_comm_t comm);

  /* ---- collectives: enqueued on `stream`, a stream of the comm's device.
   * `count` is in elements. send == recv is allowed (in place) where NCCL
   * allows it: all_reduce, broadcast, reduce; all_gather when send is
   * recv + rank * count; reduce_scatter when recv is send + rank * count. */

  flagos_status_t (*all_reduce)(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                                int32_t op, flagos_comm_t comm, flagos_stream_t stream);
  /* `send` is read on `root` only; `recv` is written on every rank. */
  flagos_status_t (*broadcast)(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                               int32_t root, flagos_comm_t comm, flagos_stream_t stream);
  /* `recv` is written on `root` only (may be NULL elsewhere). */
  flagos_status_t (*reduce)(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                            int32_t op, int32_t root, flagos_comm_t comm, flagos_stream_t stream);
  /* `recv` holds nranks * count elements, rank r's `send` at r * count. */
  flagos_status_t (*all_gather)(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                                flagos_comm_t comm, flagos_stream_t stream);
  /* `send` holds nranks * count elements; rank r receives the reduction of
   * everyone's block r. */
  flagos_status_t (*reduce_scatter)(const void* send, void* recv, uint64_t count, flagos_dtype_t dtype,
                                    int32_t op, flagos_comm_t comm, flagos_stream_t stream);

  /* ---- point to point. A send to `peer` pairs with that peer's recv from
   * this rank, in call order. Outside a group each runs on its own (and may
   * wait for the peer); inside one, they progress together. */
  flagos_status_t (*send)(const void* buf, uint64_t count, flagos_dtype_t dtype, int32_t peer,
                          flagos_comm_t comm, flagos_stream_t stream);
  flagos_status_t (*recv)(void* buf, uint64_t count, flagos_dtype_t dtype, int32_t peer,
                          flagos_comm_t comm, flagos_stream_t stream);

  /* Between group_start and group_end (nestable, per thread), calls are
   * recorded, not enqueued; group_end enqueues them as one operation whose
   * sends and receives progress together, so a ring or all-to-all of sends
   * and receives cannot deadlock. Every call in a group uses one
   * communicator and one stream. */
  flagos_status_t (*group_start)(void);
  flagos_status_t (*group_end)(void);
} flagos_collectives_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_COLLECTIVES_H_ */
