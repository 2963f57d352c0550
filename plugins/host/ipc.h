// FLAGOS_EXTENSION_IPC: device memory shared with other processes. Ordinary
// device memory is private pages; mem_alloc_shareable backs an allocation
// with a memfd of its own, which export_memory hands out and open_memory in
// another process maps. An import keeps the pages alive after the exporter
// freed them (they go with the last mapping). Option ipc=0 leaves the
// extension out of the chain.
#pragma once

#include "flagos/ext/ipc.h"

namespace flagos_host {

// The extension; `next` follows it in the chain (set while the first
// handshake configures the plugin, before the table is returned).
const flagos_extension_t* ipc_extension();
void set_ipc_next(const flagos_extension_t* next);

}  // namespace flagos_host
