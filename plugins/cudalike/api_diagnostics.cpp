// FLAGOS_EXTENSION_DIAGNOSTICS: why the plugin sees the devices it sees (the
// device table's note: what was searched, or what the runtime answered), so
// that `python -m torch_fl plugins` can say it in one line. Heads the chain.
#include "api.h"
#include "devices.h"

namespace flagos_cudalike {
namespace {

const char* device_note() { return device_table().note.c_str(); }

}  // namespace

const flagos_extension_t* Plugin::extensions() {
  static const flagos_diagnostics_ext_t ext = {
      {sizeof(flagos_diagnostics_ext_t), FLAGOS_EXTENSION_DIAGNOSTICS, FLAGOS_DIAGNOSTICS_EXT_VERSION,
       kernels_extension()},
      device_note};
  return &ext.base;
}

}  // namespace flagos_cudalike
