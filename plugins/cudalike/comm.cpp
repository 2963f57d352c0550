#include "comm.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>

#include "errors.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using Clock = std::chrono::steady_clock;

constexpr unsigned kNcclApiMagic = 0xcafebeef;
constexpr unsigned kNcclVersion2_14 = 21400;  // NCCL_VERSION(2, 14, 0): the first with blocking = 0

// Polls a non-blocking communicator until it leaves ncclInProgress, `stop`
// says so, or `deadline` passes (then ncclInProgress is returned).
template <class Stop>
int wait_ready(const CommLibrary& lib, nccl_comm native, Clock::time_point deadline, Stop&& stop) {
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int state = kNcclSuccess;
    const int got = lib.comm_get_async_error(native, &state);
    if (got != kNcclSuccess) return got;
    if (state != kNcclInProgress || stop() || Clock::now() >= deadline) return state;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

// ncclCommAbort on a thread of its own: it sets the abort flag at once, but
// then joins the library's threads (an init still waiting for peers), which
// the caller, bound to return at once, must not wait for.
void abort_in_background(const CommLibrary& lib, nccl_comm native) {
  std::thread([&lib, native] { lib.comm_abort(native); }).detach();
}

}  // namespace

CommTable& comms() {
  static auto* t = new CommTable("communicator");  // leaked: used after static destructors at exit
  return *t;
}

flagos_status_t Comm::create(const char* fn, const CommLibrary& lib, const flagos_comm_id_t& id, int32_t nranks,
                             int32_t rank, int32_t device, uint64_t timeout_ms, std::shared_ptr<Comm>* out) {
  static_assert(sizeof(NcclUniqueId) == FLAGOS_COMM_ID_BYTES, "the id carries an ncclUniqueId");
  NcclUniqueId uid;
  std::memcpy(uid.internal, id.bytes, sizeof uid.internal);
  nccl_comm native = nullptr;
  if (lib.comm_init_rank_config == nullptr) {
    // A library older than NCCL 2.14: init blocks until every rank joined.
    const int result = lib.comm_init_rank(&native, nranks, uid, rank);
    if (result != kNcclSuccess) return comm_fail(fn, "CommInitRank", result, nullptr);
  } else {
    NcclConfig config{offsetof(NcclConfig, blocking) + sizeof(int), kNcclApiMagic, kNcclVersion2_14, 0};
    int result = lib.comm_init_rank_config(&native, nranks, uid, rank, &config);
    const uint64_t wait_ms = timeout_ms != 0 ? timeout_ms : kDefaultTimeoutMs;
    if ((result == kNcclSuccess || result == kNcclInProgress) && native != nullptr)
      result = wait_ready(lib, native, Clock::now() + std::chrono::milliseconds(wait_ms), [] { return false; });
    if (result == kNcclInProgress) {
      abort_in_background(lib, native);
      return fail(FLAGOS_ERROR_TIMEOUT,
                  "%s: rank %d of %d on device %d: not every rank joined the communicator within %llu ms "
                  "(%sCommInitRankConfig aborted)",
                  fn, rank, nranks, device, static_cast<unsigned long long>(wait_ms), vendor().comm_prefix);
    }
    if (result != kNcclSuccess) {
      flagos_status_t st = comm_fail(fn, "CommInitRankConfig", result, native);
      // Invalid usage at init is the set of ranks itself (NCCL before 2.30:
      // two ranks on one GPU), which every rank sees alike: UNSUPPORTED.
      if (result == kNcclInvalidUsage) {
        const std::string why = flagos::kit::last_error();  // fail() rewrites that buffer
        st = fail(FLAGOS_ERROR_UNSUPPORTED, "%s; the library refuses these ranks (NCCL before 2.30: two on one GPU)",
                  why.c_str());
      }
      if (native != nullptr) abort_in_background(lib, native);
      return st;
    }
  }
  out->reset(new Comm(lib, native, nranks, rank, device));
  return FLAGOS_SUCCESS;
}

Comm::~Comm() {
  if (native_ == nullptr) return;
  // Destroy waits for the communicator's enqueued work; a broken one has
  // work that never ends, which only abort releases.
  if (broken_ == FLAGOS_SUCCESS)
    lib_.comm_destroy(native_);
  else
    abort_in_background(lib_, native_);
}

flagos_status_t Comm::settle(const char* fn, const char* what, int result) {
  if (result == kNcclInProgress)  // non-blocking: on the stream only once the library says so
    result = wait_ready(lib_, native_, Clock::time_point::max(), [&] { return aborting_.load(); });
  if (aborting_.load()) return fail(FLAGOS_ERROR_COMM, "%s: the communicator is being aborted", fn);
  if (result == kNcclSuccess) return FLAGOS_SUCCESS;
  const flagos_status_t st = comm_fail(fn, what, result, native_);
  // Argument errors leave the communicator usable; anything else broke it.
  if (st != FLAGOS_ERROR_INVALID_ARGUMENT) mark_broken(st, flagos::kit::last_error());
  return st;
}

flagos_status_t Comm::end_group(const char* fn) {
  std::lock_guard<std::mutex> lock(mu_);
  const int result = lib_.group_end();
  if (native_ == nullptr || broken_ != FLAGOS_SUCCESS) return sticky(fn);
  return settle(fn, "GroupEnd", result);
}

flagos_status_t Comm::sticky(const char* fn) {
  return fail(broken_ != FLAGOS_SUCCESS ? broken_ : FLAGOS_ERROR_COMM, "%s: %s", fn, why_.c_str());
}

void Comm::mark_broken(flagos_status_t status, const std::string& why) {
  if (broken_ != FLAGOS_SUCCESS) return;  // the first cause stays
  broken_ = status;
  why_ = why;
}

flagos_status_t Comm::status(const char* fn) {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return FLAGOS_SUCCESS;  // a call in progress: nothing new is known
  if (native_ == nullptr || broken_ != FLAGOS_SUCCESS) return sticky(fn);
  int state = kNcclSuccess;
  const int got = lib_.comm_get_async_error(native_, &state);
  if (got != kNcclSuccess) state = got;
  if (state == kNcclSuccess || state == kNcclInProgress) return FLAGOS_SUCCESS;
  flagos_status_t st = comm_fail(fn, "CommGetAsyncError: an operation", state, native_);
  if (st == FLAGOS_ERROR_INVALID_ARGUMENT) st = FLAGOS_ERROR_COMM;
  mark_broken(st, flagos::kit::last_error());
  return st;
}

void Comm::abort(const std::string& why) {
  aborting_.store(true);  // a thread waiting in settle() lets go of the lock
  std::lock_guard<std::mutex> lock(mu_);
  mark_broken(FLAGOS_ERROR_COMM, why);
  if (native_ != nullptr) abort_in_background(lib_, native_);
  native_ = nullptr;
}

}  // namespace flagos_cudalike
