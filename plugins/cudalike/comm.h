// One communicator of the collectives extension: an NCCL communicator of one
// device, created non-blocking so that comm_create can give up at its
// timeout and comm_abort can stop it from any thread. Failures are sticky:
// once aborted or broken, every later call reports the first cause.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "comm_library.h"
#include "flagos/ext/collectives.h"
#include "flagos/kit/handle_table.hpp"

namespace flagos_cudalike {

class Comm {
 public:
  // Joins `id` as `rank` of `nranks` on `device` (current for the call),
  // waiting at most `timeout_ms` (0: kDefaultTimeoutMs). Errors: TIMEOUT
  // (the library's init aborted), the library's own, RUNTIME_UNAVAILABLE.
  static flagos_status_t create(const char* fn, const CommLibrary& lib, const flagos_comm_id_t& id, int32_t nranks,
                                int32_t rank, int32_t device, uint64_t timeout_ms, std::shared_ptr<Comm>* out);
  ~Comm();  // ncclCommDestroy while it works, ncclCommAbort when broken; nothing once aborted
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  static constexpr uint64_t kDefaultTimeoutMs = 120000;

  int32_t device() const { return device_; }
  int32_t rank() const { return rank_; }
  int32_t nranks() const { return nranks_; }

  // Runs `call` (one library call given the native communicator) under the
  // communicator's lock, then waits out a non-blocking ncclInProgress. The
  // sticky error first, if any. `what` names the call in messages.
  template <class Call>
  flagos_status_t issue(const char* fn, const char* what, Call&& call) {
    std::lock_guard<std::mutex> lock(mu_);
    if (native_ == nullptr || broken_ != FLAGOS_SUCCESS) return sticky(fn);
    const int result = call(native_);
    return settle(fn, what, result);
  }
  // ncclGroupEnd of the calling thread's outermost group, whose calls used
  // this communicator: always called (the library's group must close), then
  // settled as issue() does.
  flagos_status_t end_group(const char* fn);
  // SUCCESS while it works, else the error that broke it (with message).
  // Never blocks: while another thread holds the lock, the last known state.
  flagos_status_t status(const char* fn);
  // ncclCommAbort, from any thread; pending work ends, later calls fail with COMM.
  void abort(const std::string& why);

 private:
  Comm(const CommLibrary& lib, void* native, int32_t nranks, int32_t rank, int32_t device)
      : lib_(lib), native_(native), nranks_(nranks), rank_(rank), device_(device) {}
  flagos_status_t settle(const char* fn, const char* what, int result);  // under mu_
  flagos_status_t sticky(const char* fn);                                // under mu_
  void mark_broken(flagos_status_t status, const std::string& why);      // under mu_

  const CommLibrary& lib_;
  std::mutex mu_;
  std::atomic<bool> aborting_{false};
  nccl_comm native_;  // nullptr once aborted
  flagos_status_t broken_ = FLAGOS_SUCCESS;
  std::string why_;
  const int32_t nranks_, rank_, device_;
};

using CommTable = flagos::kit::HandleTable<flagos_comm_t, Comm>;
CommTable& comms();

}  // namespace flagos_cudalike
