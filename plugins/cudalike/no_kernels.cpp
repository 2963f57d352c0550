// A plugin without native kernels (the vendor ships none, or the build has
// FLAGOS_BUILD_VENDOR off): the chain goes on to the graphs extension.
#include "api.h"

namespace flagos_cudalike {

const flagos_extension_t* kernels_extension() { return graphs_extension(); }

}  // namespace flagos_cudalike
