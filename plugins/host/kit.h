// The plugin kit (include/flagos/kit) under this plugin's namespace: the
// plugin's files call fail() and guarded() unqualified, the rest as kit::.
#pragma once

#include "flagos/kit/checks.hpp"
#include "flagos/kit/guarded.hpp"
#include "flagos/kit/host_services.hpp"
#include "flagos/kit/last_error.hpp"

namespace flagos_host {

namespace kit = flagos::kit;
using flagos::kit::fail;
using flagos::kit::guarded;
using flagos::kit::last_error;

}  // namespace flagos_host
