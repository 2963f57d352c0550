// The `flaggems_cpp` route kind's operator map: FlagGems' C++ runtime
// registers its operators in torch's dispatcher as `flag_gems::<name>`, with
// CUDA kernels on CUDA-shaped builds (its c_operators library, loaded by
// torch_fl._flaggems_cpp before routes are installed). An ATen operator
// takes that route when the flag_gems operator of its name takes the same
// arguments and returns the same values; a
// call is then that operator's kernel for the plugin's stock boxing target
// on the boxed operands, all in C++.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>

namespace flagos::routes {

// The flag_gems operator that implements `op` (`name` as confs spell it:
// "mm", "max.dim") with a kernel for `key`, or none: FlagGems' runtime is
// not loaded, has no such operator or no such kernel, or declares it with
// other arguments or returns.
std::optional<c10::OperatorHandle> flaggems_cpp_operator(const c10::OperatorHandle& op, const std::string& name,
                                                         c10::DispatchKey key);

}  // namespace flagos::routes
