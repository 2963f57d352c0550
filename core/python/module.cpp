// torch_fl._C: the Python face of the core. Thin: converts between Python
// values and the runtime's types; flagos::Error becomes RuntimeError with the
// same one-line message.
#include "bindings.h"

#include "flagos/abi.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_fl core bindings";
  m.attr("ABI_VERSION") = std::to_string(FLAGOS_ABI_MAJOR) + "." + std::to_string(FLAGOS_ABI_MINOR);
  flagos::python::bind_plugins(m);
  flagos::python::bind_env(m);
  flagos::python::bind_device(m);
  flagos::python::bind_routing(m);
  flagos::python::bind_distributed(m);
  flagos::python::bind_compile(m);
  flagos::python::bind_graphs(m);
  flagos::python::bind_autograd(m);
  flagos::python::bind_compat(m);
  flagos::python::bind_testing(m);
}
