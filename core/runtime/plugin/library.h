// Opening plugin libraries: RTLD_NOW | RTLD_LOCAL through Boost.DLL,
// deduplicated by file identity (a symlinked path opens the same library once)
// and never unloaded, so no static destructor can run after its code is gone.
#pragma once

#include <string>

#include "flagos/flagos.h"

namespace flagos::plugin {

struct OpenedLibrary {
  flagos_plugin_get_api_fn entry = nullptr;
  std::string identity;  // "dev:inode" of the resolved file
};

// Opens `path` (or returns the already-open library with the same identity)
// and resolves the entry symbol. Throws flagos::Error with the loader's own
// reason (dlerror text, missing symbol) on failure.
OpenedLibrary open_library(const std::string& path);

}  // namespace flagos::plugin
