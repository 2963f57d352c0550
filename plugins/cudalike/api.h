// The entry points behind the plugin table, as the static members of one
// implementation struct that flagos::kit::entry turns into the table
// (flagos/kit/entry.hpp). It implements every member of the ABI, declared
// from the table's own types; definitions live in api_device, api_memory,
// api_copy, api_stream and api_event.cpp.
#pragma once

#include <mutex>
#include <vector>

#include "flagos/flagos.h"
#include "flagos/kit/entry.hpp"

namespace flagos_cudalike {

struct Plugin {
  static const char* const kName;
  static constexpr const char* kVersion = "0.2.0";
  static const flagos_extension_t* extensions();  // api_diagnostics.cpp
  static flagos_status_t configure(const char* fn, const flagos_host_info_t* host);  // plugin_entry.cpp

  // Every member of the table, one group per api_*.cpp (the ABI's types).
#define FLAGOS_CUDALIKE_MEMBER(member, required) FLAGOS_KIT_MEMBER(member)
  FLAGOS_PLUGIN_API_1_0_FUNCTIONS(FLAGOS_CUDALIKE_MEMBER)
#undef FLAGOS_CUDALIKE_MEMBER
};

// api_collectives.cpp: FLAGOS_EXTENSION_COLLECTIVES where the vendor table
// names a communicator library, followed by testing_extension(); else the latter.
const flagos_extension_t* collectives_extension();

// api_ipc.cpp: FLAGOS_EXTENSION_IPC (memory shared between processes),
// followed by collectives_extension().
const flagos_extension_t* ipc_extension();

// api_profiler.cpp: FLAGOS_EXTENSION_PROFILER where the vendor table names
// an activity tracer, followed by ipc_extension(); else the latter.
const flagos_extension_t* profiler_extension();

// FLAGOS_EXTENSION_KERNELS, the vendor's native kernels (aclnn/kernels_ext.cpp
// for ascend), followed by graphs_extension(); or graphs_extension() alone
// (no_kernels.cpp) for a vendor without kernels or a build without them.
const flagos_extension_t* kernels_extension();

// api_graphs.cpp: FLAGOS_EXTENSION_GRAPHS (stream capture), followed by
// profiler_extension(); and the mutexes of its handles, held across fork().
const flagos_extension_t* graphs_extension();
std::vector<std::mutex*> graph_mutexes();

// api_testing.cpp: FLAGOS_EXTENSION_TESTING, the end of the chain.
const flagos_extension_t* testing_extension();

}  // namespace flagos_cudalike
