// FLAGOS_EXTENSION_COLLECTIVES over shared memory (comm.h, comm_ops.h): the
// extension table, the argument checks every call makes before it enqueues
// anything, and the per-thread group recording.
#pragma once

#include "flagos/ext/collectives.h"

namespace flagos_host {

// The extension; the testing extension follows it in the chain. With option
// collectives=0 the plugin leaves it out (plugin_entry.cpp).
const flagos_extension_t* collectives_extension();

}  // namespace flagos_host
