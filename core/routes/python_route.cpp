#include "routes/python_route.h"

#include "error.h"
#include "routes/flaggems_operands.h"

namespace flagos::routes {
namespace {

PythonRoute g_route;
thread_local bool t_preparing = false;

}  // namespace

void set_python_route(const PythonRoute& route) { g_route = route; }

std::vector<std::string> python_impl_ops(routing::RouteKind kind) {
  return g_route.list ? g_route.list(kind) : std::vector<std::string>{};
}

bool has_python_impl(routing::RouteKind kind, const std::string& op_name) {
  return g_route.lookup && g_route.lookup(kind, op_name);
}

void call_python(routing::RouteKind kind, const std::string& op_name, const c10::OperatorHandle& op,
                 torch::jit::Stack* stack) {
  if (!g_route.call)
    throw Error("aten::" + op_name + " is routed to " + std::string(routing::name(kind)) +
                ", but torch_fl._C is not loaded");
  if (!t_preparing) {
    struct Preparing {
      Preparing() { t_preparing = true; }
      ~Preparing() { t_preparing = false; }
    } preparing;
    plain_operands(op, stack);
  }
  g_route.call(kind, op_name, op, stack);
}

void holding_python(c10::function_ref<void()> body) {
  if (g_route.hold) {
    g_route.hold(body);
  } else {
    body();
  }
}

}  // namespace flagos::routes
