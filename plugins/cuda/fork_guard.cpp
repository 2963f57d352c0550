#include "fork_guard.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "errors.h"
#include "handles.h"

namespace flagos_cuda {
namespace {

std::atomic<bool> g_runtime_used{false};
std::atomic<bool> g_runtime_lost{false};
std::atomic<pid_t> g_load_pid{0};

// The handle tables' lock must not be inherited held by a thread the child
// does not have.
void prepare() { handles_mutex().lock(); }
void parent() { handles_mutex().unlock(); }
void child() {
  handles_mutex().unlock();
  if (g_runtime_used.load()) g_runtime_lost.store(true);
}

}  // namespace

void install_fork_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_load_pid.store(getpid());
    pthread_atfork(prepare, parent, child);
  });
}

flagos_status_t runtime_ready(const char* fn) {
  if (g_runtime_lost.load())
    return fail(FLAGOS_ERROR_INVALID_STATE,
                "%s: CUDA was initialised in the parent before this process was forked, and a "
                "forked child cannot use it; fork before the first device use, or use the "
                "'spawn' start method",
                fn);
  g_runtime_used.store(true);
  return FLAGOS_SUCCESS;
}

bool runtime_used() { return g_runtime_used.load(); }

bool forked_since_load() {
  pid_t loaded = g_load_pid.load();
  return loaded != 0 && loaded != getpid();
}

}  // namespace flagos_cuda
