// flagos/kit/kit.hpp — the plugin kit: what every flagos plugin needs and no
// vendor should rewrite. Header-only C++17 over the C ABI in flagos/, so a
// plugin still builds against include/ alone. Each header documents its
// ownership, threading and error rules; docs/abi-guide.md shows a plugin
// built on it.
//
// The kit's per-plugin state (fork_guard(), the thread-local last error) is
// inline: each plugin library must keep it private, as plugins do by
// building with -fvisibility=hidden and exporting the entry symbol alone
// (cmake/FlagosPlugin.cmake, cmake/flagos_plugin.map).
#pragma once

#include "flagos/flagos.h"
#include "flagos/kit/checks.hpp"
#include "flagos/kit/entry.hpp"
#include "flagos/kit/fork_guard.hpp"
#include "flagos/kit/guarded.hpp"
#include "flagos/kit/handle_table.hpp"
#include "flagos/kit/host_services.hpp"
#include "flagos/kit/last_error.hpp"
#include "flagos/kit/options.hpp"
#include "flagos/kit/properties.hpp"
#include "flagos/kit/runtime_library.hpp"
