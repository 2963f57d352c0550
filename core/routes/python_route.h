// The `flaggems` route: a registered Python implementation (FlagGems, or the
// small registry tests use) called with the op's arguments. The core does
// not link Python: torch_fl._C installs the caller at import.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <string>
#include <vector>

namespace flagos::routes {

// Calls the Python implementation registered for `op_name` with the boxed
// arguments on `stack`, replacing them with its results. Throws when none is
// registered or it raises (the Python error text is kept).
using PythonCaller = void (*)(const std::string& op_name, const c10::OperatorHandle& op,
                              torch::jit::Stack* stack);
// Whether a Python implementation of `op_name` is registered.
using PythonLookup = bool (*)(const std::string& op_name);
// Every op with a registered Python implementation.
using PythonList = std::vector<std::string> (*)();

void set_python_route(PythonCaller caller, PythonLookup lookup, PythonList list);
bool has_python_impl(const std::string& op_name);
std::vector<std::string> python_impl_ops();
void call_python(const std::string& op_name, const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace flagos::routes
