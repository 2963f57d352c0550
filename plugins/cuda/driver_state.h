// What the CUDA driver can tell without being initialised or creating
// anything: whether CUDA is already initialised in this process, and whether
// a device's primary context exists. Since CUDA 12, cudaSetDevice creates the
// primary context, so the plugin switches devices only where one exists
// (see device_scope.h), as torch's own device guard does.
#pragma once

namespace flagos_cuda {

// True when libcuda is loaded in this process and already initialised (e.g.
// by torch.cuda): asking the runtime in-process then costs nothing more.
bool driver_initialised_here();

// True when `device`'s primary context is active, or when the driver cannot
// say (then switching to the device is assumed to be cheap).
bool primary_context_active(int device);

}  // namespace flagos_cuda
