// The `flaggems` route: a registered Python implementation (FlagGems, or the
// small registry tests use) called with the op's arguments. The core does
// not link Python: torch_fl._C installs the functions below at import.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/FunctionRef.h>

#include <string>
#include <vector>

namespace flagos::routes {

struct PythonRoute {
  // Calls the Python implementation registered for `op_name` with the boxed
  // arguments on `stack`, replacing them with its results. Throws when none
  // is registered or it raises (the Python error text is kept).
  void (*call)(const std::string& op_name, const c10::OperatorHandle& op, torch::jit::Stack* stack) = nullptr;
  // Whether a Python implementation of `op_name` is registered.
  bool (*lookup)(const std::string& op_name) = nullptr;
  // Every op with a registered Python implementation.
  std::vector<std::string> (*list)() = nullptr;
  // Runs `body` holding the interpreter (the GIL). torch's bindings release
  // it around an op; a flaggems call takes it once for its whole length, so
  // that the Python objects made for the call (wrappers of the operands'
  // aliases, of results the caller drops) are freed without taking it again
  // for each one.
  void (*hold)(c10::function_ref<void()> body) = nullptr;
};

void set_python_route(const PythonRoute& route);
bool has_python_impl(const std::string& op_name);
std::vector<std::string> python_impl_ops();
// Calls PythonRoute::call, the operands prepared by plain_operands
// (flaggems_operands.h); a call made while preparing them (a flaggems
// `clone`) gets its operands as they are.
void call_python(const std::string& op_name, const c10::OperatorHandle& op, torch::jit::Stack* stack);
// `body` under PythonRoute::hold; as is before torch_fl._C installed one.
void holding_python(c10::function_ref<void()> body);

}  // namespace flagos::routes
