// fork() support. Worker threads do not survive fork(): a child forked after
// any stream worker started cannot run stream work, and says so instead of
// hanging. Global mutexes are held across fork() so the child never inherits
// one locked by a thread that no longer exists.
#pragma once

#include "flagos/abi.h"

namespace flagos_host {

// Registers the pthread_atfork handlers once. Starts nothing.
void install_fork_handlers();

// Called by a stream just before it starts its worker thread.
void note_worker_started();

// SUCCESS, or INVALID_STATE (message naming `fn`) in a child forked after
// workers had started in an ancestor.
flagos_status_t require_workers(const char* fn);

}  // namespace flagos_host
