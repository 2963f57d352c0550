/*
 * flagos/flagos.h — everything a plugin or a host needs, in one include.
 * A plugin defines FLAGOS_BUILDING_PLUGIN before including it to get the
 * exported declaration of the entry symbol.
 */
#ifndef FLAGOS_FLAGOS_H_
#define FLAGOS_FLAGOS_H_

#include "flagos/abi.h"
#include "flagos/device.h"
#include "flagos/plugin_api.h"
#include "flagos/ext/kernels.h"
#include "flagos/ext/testing.h"
#include "flagos/ext/diagnostics.h"
#include "flagos/ext/collectives.h"
#include "flagos/ext/graphs.h"
#include "flagos/ext/profiler.h"
#include "flagos/ext/ipc.h"
#include "flagos/abi_sizes.h"

#endif /* FLAGOS_FLAGOS_H_ */
