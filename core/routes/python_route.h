// The Python-implemented route kinds (`flaggems`, `tileops`): a registered
// Python implementation per operator, called with the op's arguments. The
// core does not link Python: torch_fl._C installs the functions below at
// import, and keeps one registry per kind.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/FunctionRef.h>

#include <string>
#include <vector>

#include "routing/route_kind.h"

namespace flagos::routes {

struct PythonRoute {
  // Calls the `kind` implementation registered for `op_name` with the boxed
  // arguments on `stack`, replacing them with its results. Throws when none
  // is registered or it raises (the Python error text is kept).
  void (*call)(routing::RouteKind kind, const std::string& op_name, const c10::OperatorHandle& op,
               torch::jit::Stack* stack) = nullptr;
  // Whether a `kind` implementation of `op_name` is registered.
  bool (*lookup)(routing::RouteKind kind, const std::string& op_name) = nullptr;
  // Every op with a registered `kind` implementation.
  std::vector<std::string> (*list)(routing::RouteKind kind) = nullptr;
  // Runs `body` holding the interpreter (the GIL). torch's bindings release
  // it around an op; a Python route's call takes it once for its whole
  // length, so that the Python objects made for the call (wrappers of the
  // operands' aliases, of results the caller drops) are freed without taking
  // it again for each one.
  void (*hold)(c10::function_ref<void()> body) = nullptr;
};

void set_python_route(const PythonRoute& route);
bool has_python_impl(routing::RouteKind kind, const std::string& op_name);
std::vector<std::string> python_impl_ops(routing::RouteKind kind);
// Calls PythonRoute::call, the operands prepared by plain_operands
// (flaggems_operands.h); a call made while preparing them (a flaggems
// `clone`) gets its operands as they are.
void call_python(routing::RouteKind kind, const std::string& op_name, const c10::OperatorHandle& op,
                 torch::jit::Stack* stack);
// `body` under PythonRoute::hold; as is before torch_fl._C installed one.
void holding_python(c10::function_ref<void()> body);

}  // namespace flagos::routes
