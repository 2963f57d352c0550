#include "comm.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "flagos/kit/handle_table.hpp"
#include "kit.h"

namespace flagos_host {
namespace {

constexpr char kIdPrefix[] = "flagos-host-";
constexpr uint64_t kMagic = 0x666c61676f73636dull;  // "flagoscm"
constexpr uint64_t kDefaultTimeoutMs = 180000;       // "at most a few minutes"
constexpr size_t kLine = 64;                         // one counter per cache line
constexpr size_t kHeaderBytes = 4096;
// Per-rank staging slot: large enough that the two waits per chunk are
// noise, small enough that a chunk stays in the caches between phases.
constexpr uint64_t kSlotBytes = uint64_t{1} << 20;
// Point-to-point rings: 64 MiB over all nranks^2 pairs, 64 KiB to 1 MiB each.
constexpr uint64_t kRingsTotal = uint64_t{64} << 20;
constexpr uint64_t kRingMin = uint64_t{64} << 10, kRingMax = uint64_t{1} << 20;
constexpr int64_t kLivenessPeriodNs = 100 * 1000 * 1000;

// Why a segment was marked aborted (SegmentHeader::aborted).
enum AbortCode : uint32_t { kNotAborted = 0, kAborted, kOpFailed, kRendezvousFailed, kPeerLost };

// Per-rank record, its own cache line.
struct RankInfo {
  uint32_t joined;  // 0 -> 1 by the rank itself (CAS: a second joiner is refused)
  uint32_t left;    // 1 once its communicator was released
  int32_t pid;
  int32_t pad;
  uint64_t pidns;  // inode of its pid namespace; 0 when unknown
};

uint64_t round_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }


int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t my_pidns() {
  static const uint64_t ns = [] {
    struct stat s;
    return stat("/proc/self/ns/pid", &s) == 0 ? static_cast<uint64_t>(s.st_ino) : 0;
  }();
  return ns;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The shm name of an id, or "" when the bytes are not one of our ids.
std::string segment_name(const flagos_comm_id_t& id) {
  const char* s = reinterpret_cast<const char*>(id.bytes);
  size_t n = strnlen(s, FLAGOS_COMM_ID_BYTES);
  if (n == FLAGOS_COMM_ID_BYTES || n <= sizeof kIdPrefix - 1 ||
      std::strncmp(s, kIdPrefix, sizeof kIdPrefix - 1) != 0)
    return "";
  for (size_t i = 0; i < n; ++i)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) return "";
  return "/" + std::string(s, n);
}

flagos_status_t random_bytes(unsigned char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  if (got == n) return FLAGOS_SUCCESS;
  FILE* f = std::fopen("/dev/urandom", "rb");  // kernels without getrandom
  if (f == nullptr) return FLAGOS_ERROR_INTERNAL;
  size_t r = std::fread(out, 1, n, f);
  std::fclose(f);
  return r == n ? FLAGOS_SUCCESS : FLAGOS_ERROR_INTERNAL;
}

kit::HandleTable<flagos_comm_t, Comm>& comms() {
  static auto* t = new kit::HandleTable<flagos_comm_t, Comm>("communicator");  // leaked on purpose
  return *t;
}

}  // namespace

struct SegmentHeader {
  uint64_t magic;
  int32_t nranks;  // 0 -> nranks by the first rank to arrive
  int32_t pad0;
  alignas(kLine) uint32_t arrived;
  alignas(kLine) uint32_t aborted;  // AbortCode
  int32_t aborted_by;               // the rank that set it
};
static_assert(sizeof(SegmentHeader) <= kHeaderBytes, "header fits its page");

// ---- creation --------------------------------------------------------------

flagos_status_t Comm::make_id(const char* fn, flagos_comm_id_t* id) {
  unsigned char rnd[16];
  if (random_bytes(rnd, sizeof rnd) != FLAGOS_SUCCESS)
    return fail(FLAGOS_ERROR_INTERNAL, "%s: no random bytes from getrandom or /dev/urandom: %s",
                fn, std::strerror(errno));
  char text[FLAGOS_COMM_ID_BYTES];
  int n = std::snprintf(text, sizeof text, "%s%d-", kIdPrefix, static_cast<int>(getpid()));
  for (unsigned char b : rnd) n += std::snprintf(text + n, sizeof text - n, "%02x", b);
  std::memset(id->bytes, 0, sizeof id->bytes);
  std::memcpy(id->bytes, text, static_cast<size_t>(n));
  return FLAGOS_SUCCESS;
}

flagos_status_t Comm::create(const char* fn, const flagos_comm_id_t& id, int32_t nranks,
                             int32_t rank, int32_t device, uint64_t timeout_ms,
                             std::shared_ptr<Comm>* out) {
  std::string name = segment_name(id);
  if (name.empty())
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the id was not made by this plugin's comm_id_create",
                fn);
  std::shared_ptr<Comm> c(new Comm());
  c->rank_ = rank;
  c->nranks_ = nranks;
  c->device_ = device;
  c->name_ = name;
  const uint64_t n = static_cast<uint64_t>(nranks);
  c->slot_bytes_ = kSlotBytes;
  c->ring_bytes_ = round_up(std::min(kRingMax, std::max(kRingMin, kRingsTotal / (n * n))), 4096);
  c->ranks_off_ = kHeaderBytes;
  c->channels_off_ = c->ranks_off_ + n * 3 * kLine;
  c->slots_off_ = round_up(c->channels_off_ + n * n * 2 * kLine, 4096);
  c->rings_off_ = c->slots_off_ + (n + 1) * c->slot_bytes_;
  c->length_ = c->rings_off_ + n * n * c->ring_bytes_;

  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(FLAGOS_ERROR_COMM, "%s: shm_open(%s): %s", fn, name.c_str(), std::strerror(errno));
  struct stat sb;
  int err = fstat(fd, &sb) == 0 ? 0 : errno;
  if (err == 0 && sb.st_size == 0 && ftruncate(fd, static_cast<off_t>(c->length_)) != 0) err = errno;
  if (err == 0 && sb.st_size != 0 && static_cast<uint64_t>(sb.st_size) != c->length_) {
    close(fd);  // another nranks made it: the layouts disagree, leave it alone
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: the communicator's segment %s was created for another number of ranks than %d",
                fn, name.c_str(), nranks);
  }
  void* p = err == 0 ? mmap(nullptr, c->length_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                     : MAP_FAILED;
  if (err == 0 && p == MAP_FAILED) err = errno;
  close(fd);  // the mapping keeps the segment
  if (err != 0) {
    shm_unlink(name.c_str());
    return fail(err == ENOMEM || err == ENOSPC ? FLAGOS_ERROR_OUT_OF_HOST_MEMORY : FLAGOS_ERROR_COMM,
                "%s: cannot map the communicator's %llu-byte segment %s: %s", fn,
                (unsigned long long)c->length_, name.c_str(), std::strerror(err));
  }
  c->base_ = static_cast<uint8_t*>(p);
  c->header_ = reinterpret_cast<SegmentHeader*>(c->base_);
  flagos_status_t st = c->rendezvous(fn, timeout_ms == 0 ? kDefaultTimeoutMs : timeout_ms);
  if (st != FLAGOS_SUCCESS) {
    shm_unlink(name.c_str());  // late ranks then time out on a fresh segment of their own
    return st;                 // ~Comm unmaps
  }
  *out = std::move(c);
  return FLAGOS_SUCCESS;
}

flagos_status_t Comm::rendezvous(const char* fn, uint64_t timeout_ms) {
  SegmentHeader* h = header_;
  uint64_t magic = 0;
  __atomic_compare_exchange_n(&h->magic, &magic, kMagic, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  int32_t seen = 0;
  if (!__atomic_compare_exchange_n(&h->nranks, &seen, nranks_, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE) &&
      seen != nranks_) {
    mark_segment_aborted(kRendezvousFailed);
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: rank %d says nranks %d, but the communicator was created with nranks %d", fn,
                rank_, nranks_, seen);
  }
  if (load_acquire(&h->aborted) != kNotAborted)
    return fail(FLAGOS_ERROR_TIMEOUT,
                "%s: the rendezvous of this id already failed on rank %d (it timed out or was "
                "given bad arguments)",
                fn, load_acquire(&h->aborted_by));
  RankInfo* me = reinterpret_cast<RankInfo*>(base_ + ranks_off_ + rank_ * 3 * kLine);
  uint32_t zero = 0;
  if (!__atomic_compare_exchange_n(&me->joined, &zero, 1u, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    mark_segment_aborted(kRendezvousFailed);
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: rank %d joined this communicator twice", fn,
                rank_);
  }
  me->pid = static_cast<int32_t>(getpid());
  me->pidns = my_pidns();
  uint32_t arrived = __atomic_add_fetch(&h->arrived, 1u, __ATOMIC_ACQ_REL);
  // The last to arrive knows every rank has the segment mapped: the name can go.
  if (arrived == static_cast<uint32_t>(nranks_)) shm_unlink(name_.c_str());
  const int64_t deadline = now_ns() + static_cast<int64_t>(std::min<uint64_t>(timeout_ms, 1ull << 40)) * 1000000;
  uint64_t idle = 0;
  while ((arrived = load_acquire(&h->arrived)) < static_cast<uint32_t>(nranks_)) {
    if (load_acquire(&h->aborted) != kNotAborted)
      return fail(FLAGOS_ERROR_TIMEOUT,
                  "%s: rank %d gave up the rendezvous (%u of %d ranks had arrived)", fn,
                  load_acquire(&h->aborted_by), arrived, nranks_);
    if (now_ns() >= deadline) {
      mark_segment_aborted(kRendezvousFailed);
      std::string missing;
      for (int32_t r = 0, shown = 0; r < nranks_ && shown < 8; ++r) {
        auto* info = reinterpret_cast<RankInfo*>(base_ + ranks_off_ + r * 3 * kLine);
        if (load_acquire(&info->joined) == 0) {
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
          ++shown;
        }
      }
      return fail(FLAGOS_ERROR_TIMEOUT,
                  "%s: timed out after %llu ms waiting for the other ranks: %u of %d ranks arrived "
                  "(missing: %s%s)",
                  fn, (unsigned long long)timeout_ms, arrived, nranks_, missing.c_str(),
                  static_cast<int32_t>(arrived) + 8 < nranks_ ? ", ..." : "");
    }
    if (local_abort_.load()) return fail(FLAGOS_ERROR_COMM, "%s: aborted", fn);
    ++idle;
    if (idle < 256) sched_yield();
    else {
      struct timespec ts = {0, 1000000};  // 1 ms: joining is not the hot path
      nanosleep(&ts, nullptr);
    }
  }
  return FLAGOS_SUCCESS;
}

Comm::~Comm() {
  if (base_ == nullptr) return;
  // Peers that still wait for this rank fail instead of waiting forever.
  auto* me = reinterpret_cast<RankInfo*>(base_ + ranks_off_ + rank_ * 3 * kLine);
  if (load_acquire(&me->joined) == 1) store_release(&me->left, 1u);
  munmap(base_, length_);
}

// ---- layout ------------------------------------------------------------------

uint8_t* Comm::slot(int32_t r) const { return base_ + slots_off_ + r * slot_bytes_; }
uint8_t* Comm::result() const { return base_ + slots_off_ + nranks_ * slot_bytes_; }

Channel Comm::channel(int32_t from, int32_t to) const {
  const size_t pair = static_cast<size_t>(from) * nranks_ + to;
  Channel ch;
  ch.head = reinterpret_cast<uint64_t*>(base_ + channels_off_ + pair * 2 * kLine);
  ch.tail = reinterpret_cast<uint64_t*>(base_ + channels_off_ + (pair * 2 + 1) * kLine);
  ch.data = base_ + rings_off_ + pair * ring_bytes_;
  ch.size = ring_bytes_;
  return ch;
}

uint64_t* Comm::counter(int32_t r, int phase) const {
  return reinterpret_cast<uint64_t*>(base_ + ranks_off_ + (r * 3 + 1 + phase) * kLine);
}

// ---- progress and waiting ----------------------------------------------------

void Comm::post(int phase, uint64_t step) { store_release(counter(rank_, phase), step); }

flagos_status_t Comm::wait_rank(const char* fn, int32_t r, int phase, uint64_t step) {
  uint64_t idle = 0;
  const uint64_t* c = counter(r, phase);
  while (load_acquire(c) < step) {
    auto* info = reinterpret_cast<RankInfo*>(base_ + ranks_off_ + r * 3 * kLine);
    if (load_acquire(&info->left) != 0)
      return fail(FLAGOS_ERROR_COMM,
                  "%s: rank %d released its communicator while rank %d still waits for it (the "
                  "ranks did not call the same collectives)",
                  fn, r, rank_);
    flagos_status_t st = idle_wait(fn, &idle);
    if (st != FLAGOS_SUCCESS) return st;
  }
  return FLAGOS_SUCCESS;
}

flagos_status_t Comm::wait_all(const char* fn, int phase, uint64_t step) {
  for (int32_t r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    flagos_status_t st = wait_rank(fn, r, phase, step);
    if (st != FLAGOS_SUCCESS) return st;
  }
  return FLAGOS_SUCCESS;
}

flagos_status_t Comm::idle_wait(const char* fn, uint64_t* idle) {
  flagos_status_t st = check_alive(fn);
  if (st != FLAGOS_SUCCESS) return st;
  const uint64_t i = (*idle)++;
  if (i < 128) {  // the peer is usually a few microseconds behind
    for (int k = 0; k < 16; ++k) cpu_relax();
  } else if (i < 1024) {  // give the core to a peer that shares it
    sched_yield();
  } else {  // a peer that is far behind (or gone): sleep, and look for it
    struct timespec ts = {0, i < 4096 ? 20000 : 200000};
    nanosleep(&ts, nullptr);
  }
  return FLAGOS_SUCCESS;
}

flagos_status_t Comm::check_alive(const char* fn) {
  if (local_abort_.load(std::memory_order_relaxed))
    return fail(FLAGOS_ERROR_COMM, "%s: the communicator was aborted (comm_abort on rank %d)", fn,
                rank_);
  uint32_t code = load_acquire(&header_->aborted);
  if (code != kNotAborted) {
    int32_t by = load_acquire(&header_->aborted_by);
    const char* why = code == kAborted       ? "comm_abort was called"
                      : code == kOpFailed    ? "an operation failed there"
                      : code == kPeerLost    ? "it found a peer process gone"
                                             : "its rendezvous failed";
    return fail(FLAGOS_ERROR_COMM, "%s: the communicator was aborted by rank %d (%s)", fn, by, why);
  }
  // Now and then, look for peer processes that died without telling anyone.
  const int64_t now = now_ns();
  int64_t next = next_liveness_check_ns_.load(std::memory_order_relaxed);
  if (now < next) return FLAGOS_SUCCESS;
  next_liveness_check_ns_.store(now + kLivenessPeriodNs, std::memory_order_relaxed);
  if (next == 0) return FLAGOS_SUCCESS;  // first poll: start the clock
  const int32_t self = static_cast<int32_t>(getpid());
  for (int32_t r = 0; r < nranks_; ++r) {
    auto* info = reinterpret_cast<RankInfo*>(base_ + ranks_off_ + r * 3 * kLine);
    int32_t pid = info->pid;
    // Another pid namespace gives the numbers another meaning: no verdict.
    if (r == rank_ || pid <= 0 || pid == self || info->pidns == 0 || info->pidns != my_pidns())
      continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      mark_segment_aborted(kPeerLost);
      return fail(FLAGOS_ERROR_COMM, "%s: rank %d (pid %d) is gone", fn, r, pid);
    }
  }
  return FLAGOS_SUCCESS;
}

// ---- failure state -----------------------------------------------------------

void Comm::mark_segment_aborted(uint32_t code) {
  uint32_t none = kNotAborted;
  // aborted_by is written first so a reader that sees the code sees the rank.
  if (load_acquire(&header_->aborted) != kNotAborted) return;
  store_release(&header_->aborted_by, rank_);
  __atomic_compare_exchange_n(&header_->aborted, &none, code, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
}

void Comm::abort(const char* why) {
  local_abort_.store(true);
  mark_segment_aborted(kAborted);
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_.load() == FLAGOS_SUCCESS) {
    error_message_ = why;
    error_.store(FLAGOS_ERROR_COMM, std::memory_order_release);
  }
}

flagos_status_t Comm::fail_op(flagos_status_t st) {
  mark_segment_aborted(kOpFailed);
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_.load() == FLAGOS_SUCCESS) {
    error_message_ = last_error();
    error_.store(st, std::memory_order_release);
  }
  return st;
}

flagos_status_t Comm::status(const char* fn) {
  if (error_.load(std::memory_order_acquire) == FLAGOS_SUCCESS &&
      load_acquire(&header_->aborted) != kNotAborted) {
    fail_op(check_alive("comm_status"));  // broken by a peer: sticky from now on
  }
  std::lock_guard<std::mutex> lock(error_mu_);
  flagos_status_t st = error_.load();
  if (st == FLAGOS_SUCCESS) return st;
  return fail(st, "%s: the communicator failed earlier: %s", fn, error_message_.c_str());
}

// ---- handles -----------------------------------------------------------------

flagos_comm_t add_comm(std::shared_ptr<Comm> c) { return comms().add(std::move(c)); }

flagos_status_t find_comm(const char* fn, flagos_comm_t h, std::shared_ptr<Comm>* out) {
  return comms().find(fn, h, out);
}

flagos_status_t remove_comm(const char* fn, flagos_comm_t h, std::shared_ptr<Comm>* out) {
  return comms().take(fn, h, out);
}

std::mutex& comm_table_mutex() { return comms().mutex(); }

}  // namespace flagos_host
