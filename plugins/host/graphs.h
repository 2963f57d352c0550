// FLAGOS_EXTENSION_GRAPHS: stream capture as a recorded task list
// (capture.h). With option graphs=0 the plugin leaves it out of the chain.
#pragma once

#include <mutex>
#include <vector>

#include "flagos/ext/graphs.h"

namespace flagos_host {

// The extension; `next` follows it in the chain (set while the first
// handshake configures the plugin, before the table is returned).
const flagos_extension_t* graphs_extension();
void set_graphs_next(const flagos_extension_t* next);

// The mutexes of the graph and executable handles; held across fork().
std::vector<std::mutex*> graph_mutexes();

}  // namespace flagos_host
