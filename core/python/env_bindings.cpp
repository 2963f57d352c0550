// torch_fl._C env functions: the registry table, read by torch_fl._env.
#include <pybind11/stl.h>

#include "bindings.h"
#include "env/registry.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

py::dict describe_variable(const env::Variable& v) {
  py::dict d;
  d["name"] = std::string(v.name);
  d["scope"] = std::string(env::scope_name(v.scope));
  d["type"] = std::string(env::type_name(v.type));
  d["default"] = std::string(v.default_value);
  d["default_doc"] = std::string(v.default_doc);
  d["choices"] = std::string(v.choices);
  d["purpose"] = std::string(v.purpose);
  return d;
}

}  // namespace

void bind_env(py::module_& m) {
  m.def("env_variables", [] {
    py::list out;
    for (const env::Variable& v : env::variables()) out.append(describe_variable(v));
    return out;
  });
}

}  // namespace flagos::python
