// fork() and the CUDA runtime. CUDA cannot be used in a child forked after
// the runtime was initialised in its parent. The plugin therefore keeps the
// runtime out of the process until the first call that needs a device (the
// device list comes from a helper process, see probe.h), and a child forked
// after that point gets INVALID_STATE with a clear message instead of
// CUDA's "initialization error".
#pragma once

#include "flagos/abi.h"

namespace flagos_cuda {

// Registers the pthread_atfork handlers and notes the loading process. Once.
void install_fork_handlers();

// Every entry point that calls the CUDA runtime calls this first: SUCCESS
// (and the runtime counts as initialised in this process from now on), or
// INVALID_STATE naming `fn` in a child forked after the parent initialised it.
flagos_status_t runtime_ready(const char* fn);

// True once the CUDA runtime may have been initialised in this process.
bool runtime_used();

// True in a process forked after the plugin was loaded.
bool forked_since_load();

}  // namespace flagos_cuda
