// FLAGOS_LOG's diagnostic channels ("dispatch", "fallback", "op_cache", "plugin"):
// whether one is on. The variable is read once per process (the registry
// reports entries naming no channel); the answer is then a cached lookup,
// cheap enough for per-call paths.
#pragma once

#include <string_view>

namespace flagos::diag {

bool channel_enabled(std::string_view channel);

}  // namespace flagos::diag
