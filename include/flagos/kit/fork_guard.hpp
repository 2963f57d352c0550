// flagos/kit/fork_guard.hpp — fork() for plugins. A child forked after the
// parent started what cannot cross fork() (a vendor runtime, worker threads)
// gets INVALID_STATE with the plugin's explanation instead of a hang or a
// vendor's cryptic error; a child forked before that point works normally.
// Mutexes registered here are held across fork(), so the child never
// inherits one locked by a thread it does not have.
//
// Ownership: one guard per plugin (fork_guard()), process lifetime, leaked
// on purpose so that it outlives static destructors.
// Threading: install() is idempotent and thread-safe; the rest is lock-free.
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "flagos/kit/last_error.hpp"

namespace flagos::kit {

class ForkGuard {
 public:
  // Registers the pthread_atfork handlers and notes the loading process.
  // `lost_reason` (static storage) completes "<fn>: <lost_reason>" in the
  // child's error; `hold` are the mutexes to keep consistent across fork().
  // Only the first call counts.
  void install(const char* lost_reason, std::vector<std::mutex*> hold) {
    std::call_once(once_, [&] {
      reason_ = lost_reason;
      hold_ = std::move(hold);
      load_pid_.store(getpid());
      pthread_atfork(&ForkGuard::prepare, &ForkGuard::parent, &ForkGuard::child);
    });
  }

  // SUCCESS, or INVALID_STATE naming `fn` in a child forked after use().
  flagos_status_t check(const char* fn) const noexcept {
    if (!lost_.load(std::memory_order_relaxed)) return FLAGOS_SUCCESS;
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s", fn, reason_);
  }

  // check(), then marks the resource in use in this process from now on.
  flagos_status_t use(const char* fn) noexcept {
    flagos_status_t st = check(fn);
    if (st == FLAGOS_SUCCESS && !used_.load(std::memory_order_relaxed)) used_.store(true);
    return st;
  }

  bool used() const noexcept { return used_.load(std::memory_order_relaxed); }
  // True in a process forked after the plugin was loaded.
  bool forked_since_load() const noexcept {
    const pid_t loaded = load_pid_.load();
    return loaded != 0 && loaded != getpid();
  }

 private:
  static void prepare();
  static void parent();
  static void child();

  std::once_flag once_;
  const char* reason_ = "";
  std::vector<std::mutex*> hold_;
  std::atomic<bool> used_{false};
  std::atomic<bool> lost_{false};
  std::atomic<pid_t> load_pid_{0};
};

// The plugin's guard (one per plugin library: the kit is compiled into it).
inline ForkGuard& fork_guard() {
  static ForkGuard* guard = new ForkGuard;
  return *guard;
}

inline void ForkGuard::prepare() {
  for (std::mutex* m : fork_guard().hold_) m->lock();
}
inline void ForkGuard::parent() {
  auto& hold = fork_guard().hold_;
  for (auto it = hold.rbegin(); it != hold.rend(); ++it) (*it)->unlock();
}
inline void ForkGuard::child() {
  ForkGuard& g = fork_guard();
  for (auto it = g.hold_.rbegin(); it != g.hold_.rend(); ++it) (*it)->unlock();
  if (g.used_.load()) g.lost_.store(true);
}

}  // namespace flagos::kit
