// Handshake checks on a plugin table, as docs/architecture.md's "Plugin ABI"
// states them: major equal, minor inside the supported window, table large
// enough for the claimed minor, required members present.
#pragma once

#include <cstdint>
#include <string>

#include "flagos/flagos.h"

namespace flagos::plugin {

// Empty when the table is acceptable, otherwise one sentence saying why not.
std::string validate_table(const flagos_plugin_api_t* api);

// min(core minor, plugin minor): members beyond it are used only through
// FLAGOS_HAS_FN guards.
std::uint32_t effective_minor(const flagos_plugin_api_t& api);

}  // namespace flagos::plugin
