#include "fork_guard.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

#include "errors.h"
#include "handles.h"
#include "memory.h"

namespace flagos_host {
namespace {

std::atomic<bool> g_workers_started{false};
std::atomic<bool> g_workers_lost{false};

// Lock order matches the rest of the plugin: the two are never nested elsewhere.
void before_fork() {
  handles_mutex().lock();
  memory_mutex().lock();
}

void after_fork_parent() {
  memory_mutex().unlock();
  handles_mutex().unlock();
}

void after_fork_child() {
  memory_mutex().unlock();
  handles_mutex().unlock();
  if (g_workers_started.load()) g_workers_lost.store(true);
}

}  // namespace

void install_fork_handlers() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(before_fork, after_fork_parent, after_fork_child); });
}

void note_worker_started() { g_workers_started.store(true); }

flagos_status_t require_workers(const char* fn) {
  if (!g_workers_lost.load()) return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_INVALID_STATE,
              "%s: unusable after fork(): the parent had started stream worker threads, "
              "which the child does not have; fork before the first stream work, or use "
              "the plugin only in the parent",
              fn);
}

}  // namespace flagos_host
