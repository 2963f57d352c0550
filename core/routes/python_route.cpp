#include "routes/python_route.h"

#include "error.h"

namespace flagos::routes {
namespace {

PythonCaller g_caller = nullptr;
PythonLookup g_lookup = nullptr;
PythonList g_list = nullptr;

}  // namespace

void set_python_route(PythonCaller caller, PythonLookup lookup, PythonList list) {
  g_caller = caller;
  g_lookup = lookup;
  g_list = list;
}

std::vector<std::string> python_impl_ops() { return g_list ? g_list() : std::vector<std::string>{}; }

bool has_python_impl(const std::string& op_name) { return g_lookup && g_lookup(op_name); }

void call_python(const std::string& op_name, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (!g_caller) throw Error("aten::" + op_name + " is routed to flaggems, but torch_fl._C is not loaded");
  g_caller(op_name, op, stack);
}

}  // namespace flagos::routes
