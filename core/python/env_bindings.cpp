// torch_fl._C env functions: the registry tables and the one parser, read by
// torch_fl._env (so C++ and Python cannot disagree on a value).
#include <pybind11/stl.h>

#include "bindings.h"
#include "env/registry.h"
#include "error.h"

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
  d["group"] = std::string(v.group);
  d["waits_for"] = std::string(v.waits_for);
  d["implemented_on"] = std::string(v.implemented_on);
  return d;
}

py::dict describe_family(const env::Family& f) {
  py::dict d;
  d["prefix"] = std::string(f.prefix);
  d["placeholder"] = std::string(f.placeholder);
  d["scope"] = std::string(env::scope_name(f.scope));
  d["default_doc"] = std::string(f.default_doc);
  d["purpose"] = std::string(f.purpose);
  d["group"] = std::string(f.group);
  d["waits_for"] = std::string(f.waits_for);
  return d;
}

py::dict describe_foreign(const env::Foreign& f) {
  py::dict d;
  d["name"] = std::string(f.name);
  d["fallback"] = std::string(f.fallback);
  d["owner"] = std::string(f.owner);
  d["direction"] = std::string(env::direction_name(f.direction));
  d["direction_doc"] = std::string(f.direction_doc);
  d["purpose"] = std::string(f.purpose);
  return d;
}

py::dict describe_retired(const env::Retired& r) {
  py::dict d;
  d["name"] = std::string(r.name);
  d["successor"] = std::string(r.successor);
  d["replaced_by"] = std::string(r.replaced_by);
  return d;
}

template <typename T, typename F>
py::list describe_all(const std::vector<T>& table, F describe) {
  py::list out;
  for (const T& item : table) out.append(describe(item));
  return out;
}

// The effective typed value of an owned variable (or a family member):
// bool, int, float, str, list[str], or None where there is neither a value
// nor a default.
py::object effective(const std::string& name) {
  if (env::find_family(name) && !env::find(name)) {
    auto value = env::raw(name);
    return value ? py::object(py::str(*value)) : py::object(py::none());
  }
  const env::Variable* var = env::find(name);
  if (!var) throw Error(name + " is not a declared torch_fl variable");
  switch (var->type) {
    case env::Type::Bool: return py::bool_(env::get_bool(name));
    case env::Type::Int: {
      auto v = env::get_int_opt(name);
      return v ? py::object(py::int_(*v)) : py::object(py::none());
    }
    case env::Type::Float: {
      auto v = env::get_float_opt(name);
      return v ? py::object(py::float_(*v)) : py::object(py::none());
    }
    case env::Type::List: return py::cast(env::get_list(name));
    case env::Type::Enum:
    case env::Type::Path:
    case env::Type::String: {
      std::string v = env::get_string(name);
      return v.empty() ? py::object(py::none()) : py::object(py::str(v));
    }
  }
  return py::none();
}

}  // namespace

void bind_env(py::module_& m) {
  m.def("env_variables", [] { return describe_all(env::variables(), describe_variable); });
  m.def("env_families", [] { return describe_all(env::families(), describe_family); });
  m.def("env_foreign", [] { return describe_all(env::foreign(), describe_foreign); });
  m.def("env_retired", [] { return describe_all(env::retired(), describe_retired); });
  m.def("env_get", &effective, py::arg("name"));
  m.def("env_validate_runtime", &env::validate_runtime_environment);
}

}  // namespace flagos::python
