// A communicator: one POSIX shared-memory segment that every rank (a process,
// or a thread of one) maps, named from the comm id and unlinked as soon as all
// ranks joined, so nothing is left in /dev/shm. The segment holds the
// rendezvous state, per-rank sequence counters, the staging slots of the
// collectives and one byte ring per ordered pair of ranks for point-to-point.
// The algorithms that use this layout are in comm_ops.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flagos/ext/collectives.h"

namespace flagos_host {

// Acquire/release access to the counters other ranks write in the shared
// segment (plain memory there, not std::atomic objects).
template <class T>
inline T load_acquire(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <class T>
inline void store_release(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

struct SegmentHeader;  // comm.cpp

// A one-way byte ring from rank `from` to rank `to`: the sender advances
// *head, the receiver *tail; both count bytes since the communicator began.
struct Channel {
  uint64_t* head = nullptr;
  uint64_t* tail = nullptr;
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

class Comm {
 public:
  // Creates the segment or joins it, then waits until all `nranks` joined or
  // `timeout_ms` passed. Errors: INVALID_ARGUMENT (an id not from
  // comm_id_create, a rank that joined twice, ranks disagreeing on nranks),
  // TIMEOUT (naming how many ranks arrived; the segment is unlinked and the
  // ranks already waiting are told), COMM or OUT_OF_HOST_MEMORY when the
  // segment cannot be made or mapped.
  static flagos_status_t create(const char* fn, const flagos_comm_id_t& id, int32_t nranks,
                                int32_t rank, int32_t device, uint64_t timeout_ms,
                                std::shared_ptr<Comm>* out);
  // Makes a fresh id: "flagos-host-<pid>-<32 random hex digits>". Errors:
  // INTERNAL when the kernel has no randomness to give.
  static flagos_status_t make_id(const char* fn, flagos_comm_id_t* id);

  ~Comm();  // unmaps the segment (the name is long gone)
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int32_t rank() const { return rank_; }
  int32_t nranks() const { return nranks_; }
  int32_t device() const { return device_; }

  // ---- failure state ------------------------------------------------------
  // Marks this rank and the segment aborted: every wait of every rank fails.
  void abort(const char* why);
  // The sticky error: SUCCESS, or the first failure with its message
  // (set as the calling thread's last error, naming `fn`).
  flagos_status_t status(const char* fn);
  flagos_status_t error_code() const { return error_.load(std::memory_order_acquire); }
  // Records a failed operation (status and the thread's last error) as the
  // sticky error and tells the peers; returns `st`.
  flagos_status_t fail_op(flagos_status_t st);

  // ---- what comm_ops.cpp works with ---------------------------------------
  // Serializes operations: one at a time per communicator, in stream order.
  std::mutex& run_mutex() { return run_mu_; }
  uint64_t next_step() { return ++step_; }  // with run_mutex() held

  uint8_t* slot(int32_t r) const;  // rank r's staging slot (slot_bytes())
  uint8_t* result() const;         // the shared result area (slot_bytes())
  uint64_t slot_bytes() const { return slot_bytes_; }
  Channel channel(int32_t from, int32_t to) const;

  // Publishes this rank's progress: phase 0 ("my inputs are staged") or
  // phase 1 ("my results are out / I finished reading") of step `step`.
  void post(int phase, uint64_t step);
  // Waits until every rank posted `phase` of `step`. COMM on abort or a lost peer.
  flagos_status_t wait_all(const char* fn, int phase, uint64_t step);
  // Waits until rank r posted `phase` of `step`.
  flagos_status_t wait_rank(const char* fn, int32_t r, int phase, uint64_t step);
  // For progress loops of their own: COMM (with message) once aborted or a
  // peer is lost, else SUCCESS. `idle` counts fruitless polls; the call backs
  // off (spin, yield, then short sleeps) as it grows.
  flagos_status_t idle_wait(const char* fn, uint64_t* idle);

 private:
  Comm() = default;
  flagos_status_t check_alive(const char* fn);
  uint64_t* counter(int32_t r, int phase) const;
  flagos_status_t rendezvous(const char* fn, uint64_t timeout_ms);
  void mark_segment_aborted(uint32_t code);

  int32_t rank_ = 0, nranks_ = 0, device_ = 0;
  std::string name_;  // the shm name, for unlink and messages
  uint8_t* base_ = nullptr;
  size_t length_ = 0;
  SegmentHeader* header_ = nullptr;
  size_t ranks_off_ = 0, channels_off_ = 0, slots_off_ = 0, rings_off_ = 0;
  uint64_t slot_bytes_ = 0, ring_bytes_ = 0;

  std::mutex run_mu_;
  uint64_t step_ = 0;

  std::atomic<bool> local_abort_{false};
  std::atomic<flagos_status_t> error_{FLAGOS_SUCCESS};
  std::mutex error_mu_;
  std::string error_message_;
  std::atomic<int64_t> next_liveness_check_ns_{0};
};

// The live communicators (kit::HandleTable): NULL, foreign or destroyed
// handles are INVALID_HANDLE.
flagos_comm_t add_comm(std::shared_ptr<Comm> c);
flagos_status_t find_comm(const char* fn, flagos_comm_t h, std::shared_ptr<Comm>* out);
flagos_status_t remove_comm(const char* fn, flagos_comm_t h, std::shared_ptr<Comm>* out);
std::mutex& comm_table_mutex();  // held across fork()

}  // namespace flagos_host
