// What the vendor's driver library can tell without initialising anything:
// whether the runtime is already initialised in this process, and whether a
// device's primary context exists. Since CUDA 12, cudaSetDevice creates the
// primary context, so the plugin switches devices only where one exists
// (see device_scope.h), as torch's own device guard does. Vendors without a
// driver library answer "not initialised" and "context active".
#pragma once

namespace flagos_cudalike {

// True when the driver is loaded in this process and already initialised
// (e.g. by a vendor torch): asking the runtime in-process then costs nothing more.
bool driver_initialised_here();

// True when `device`'s primary context is active, or when the driver cannot
// say (then switching to the device is assumed to be cheap). After runtime_ready.
bool primary_context_active(int device);

}  // namespace flagos_cudalike
