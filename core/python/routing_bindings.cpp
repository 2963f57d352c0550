// torch_fl._C routing functions: install the route table, introspect it,
// check a conf, and the Python side of the `flaggems` and `tileops` routes
// (a registry of Python implementations per kind, called with the GIL held).
#include <pybind11/stl.h>

#include <array>
#include <set>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/utils/tensor_memoryformats.h>

#include "bindings.h"
#include "dispatch/catalog.h"
#include "dispatch/install.h"
#include "routes/native.h"
#include "error.h"
#include "routes/python_route.h"
#include "routes/typed_boxing_ops.h"
#include "routing/conf.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

// One registry (a dict: op -> callable) per Python-implemented route kind,
// indexed by RouteKind; never destroyed (exit order).
py::object& registry(routing::RouteKind kind) {
  static auto* dicts = new std::array<py::object, routing::kRouteKindCount>();
  py::object& d = dicts->at(static_cast<size_t>(kind));
  if (!d) d = py::dict();
  return d;
}

bool lookup(routing::RouteKind kind, const std::string& op) {
  py::gil_scoped_acquire gil;
  return py::bool_(registry(kind).attr("__contains__")(op));
}

std::vector<std::string> list(routing::RouteKind kind) {
  py::gil_scoped_acquire gil;
  std::vector<std::string> ops;
  for (auto key : registry(kind)) ops.push_back(py::str(key));
  return ops;
}

// An argument as torch's own Python kernels receive it: a dtype, layout or
// memory format is an int in an IValue, and torch.dtype (...) in Python.
py::object to_python(c10::IValue&& value, const c10::Argument& arg) {
  if (value.isInt()) {
    const c10::Type* type = arg.real_type().get();
    if (const auto* optional = type->castRaw<c10::OptionalType>()) type = optional->getElementType().get();
    const int64_t v = value.toInt();
    switch (type->kind()) {
      case c10::TypeKind::ScalarTypeType:
        return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(
            torch::getTHPDtype(static_cast<at::ScalarType>(v))));
      case c10::TypeKind::LayoutType:
        return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(
            torch::getTHPLayout(static_cast<at::Layout>(v))));
      case c10::TypeKind::MemoryFormatType:
        return py::reinterpret_borrow<py::object>(torch::utils::getTHPMemoryFormat(static_cast<at::MemoryFormat>(v)));
      default:
        break;
    }
  }
  return torch::jit::toPyObject(std::move(value));
}

void call(routing::RouteKind kind, const std::string& op_name, const c10::OperatorHandle& op,
          torch::jit::Stack* stack) {
  // On every call of a Python route: C API calls, not attribute lookups
  // (the route's own cost is measured against FlagGems called directly).
  py::gil_scoped_acquire gil;
  const std::string kind_name(routing::name(kind));
  const c10::FunctionSchema& schema = op.schema();
  const size_t n = schema.arguments().size();
  PyObject* fn = PyDict_GetItemString(registry(kind).ptr(), op_name.c_str());  // borrowed
  if (!fn) throw Error("aten::" + op_name + " is routed to " + kind_name + ", but no Python implementation is registered");
  size_t positional = 0;
  for (const c10::Argument& a : schema.arguments()) positional += a.kwarg_only() ? 0 : 1;
  py::tuple args(positional);
  py::object kwargs;  // null unless the schema has keyword-only arguments
  for (size_t i = 0, p = 0; i < n; ++i) {
    const c10::Argument& a = schema.arguments()[i];
    py::object value = to_python(std::move((*stack)[stack->size() - n + i]), a);
    if (!a.kwarg_only()) {
      PyTuple_SET_ITEM(args.ptr(), p++, value.release().ptr());
      continue;
    }
    if (!kwargs) kwargs = py::dict();
    PyDict_SetItemString(kwargs.ptr(), a.name().c_str(), value.ptr());
  }
  py::object result = py::reinterpret_steal<py::object>(PyObject_Call(fn, args.ptr(), kwargs.ptr()));
  if (!result) {
    py::error_already_set e;
    throw Error(kind_name + " implementation of aten::" + op_name + " raised: " + e.what());
  }
  torch::jit::drop(*stack, n);
  const auto& returns = schema.returns();
  if (returns.size() == 1) {
    stack->push_back(torch::jit::toIValue(result, returns[0].type()));
  } else if (returns.size() > 1) {
    py::tuple tuple = result.cast<py::tuple>();
    for (size_t r = 0; r < returns.size(); ++r)
      stack->push_back(torch::jit::toIValue(tuple[r], returns[r].type()));
  }
}

void hold(c10::function_ref<void()> body) {
  py::gil_scoped_acquire gil;
  body();
}

py::dict describe(const routing::Route& r) {
  py::dict d;
  d["op"] = r.op;
  d["route"] = std::string(routing::name(r.kind));
  d["why"] = r.why;
  if (!r.error.empty()) d["error"] = r.error;
  return d;
}

py::dict describe(const dispatch::Installed& t) {
  py::list routes;
  for (const auto& r : t.routes) routes.append(describe(r));
  py::dict d;
  d["conf"] = t.conf_path;
  d["routes"] = routes;
  d["default"] = describe(t.default_route);
  d["default_served"] = py::frozenset(py::cast(t.default_served));
  return d;
}

dispatch::CatalogOptions catalog_options(const py::dict& d) {
  dispatch::CatalogOptions o;
  o.torch_version = d["torch_version"].cast<std::string>();
  o.flaggems_enabled = d["flaggems_enabled"].cast<bool>();
  o.flaggems_off_reason = d["flaggems_off_reason"].cast<std::string>();
  o.boxing_compiled = d["boxing_compiled"].cast<bool>();
  o.flaggems_ops = d["flaggems_ops"].cast<std::vector<std::string>>();
  o.flaggems_cpp_enabled = d["flaggems_cpp_enabled"].cast<bool>();
  o.flaggems_cpp_off_reason = d["flaggems_cpp_off_reason"].cast<std::string>();
  o.tileops_enabled = d["tileops_enabled"].cast<bool>();
  o.tileops_off_reason = d["tileops_off_reason"].cast<std::string>();
  o.tileops_ops = d["tileops_ops"].cast<std::vector<std::string>>();
  return o;
}

}  // namespace

void bind_routing(py::module_& m) {
  routes::set_python_route({&call, &lookup, &list, &hold});
  // The dict of implementations the `kind` route calls ("flaggems", "tileops").
  m.def("_set_python_registry", [](py::object dict, const std::string& kind) {
    auto k = routing::parse(kind, false);
    if (!k || (*k != routing::RouteKind::FlagGems && *k != routing::RouteKind::TileOps))
      throw Error("no Python-implemented route kind '" + kind + "'");
    registry(*k) = std::move(dict);
  });
  m.def("_install_routes", [](const std::string& conf, const py::dict& catalog) {
    return describe(dispatch::install({conf, catalog_options(catalog)}));
  });
  m.def("_routes", []() -> py::object {
    const auto* t = dispatch::installed();
    return t ? py::object(describe(*t)) : py::object(py::none());
  });
  m.def("_builtin_ops", [] {
    const auto& ops = dispatch::builtin_ops();
    return std::vector<std::string>(ops.begin(), ops.end());
  });
  m.def("_typed_boxing_ops", [] { return routes::typed_boxing_ops(); });
  m.def("_typed_schema_mismatch", [](const std::string& compiled) { return routes::typed_schema_mismatch(compiled); });
  m.def("_plugin_kernel_schemas", [] { return routes::plugin_kernel_schemas(); });
  m.def("_op_cache_stats", [] {
    py::dict stats;
    for (const auto& s : routes::kernel_cache_stats()) {
      py::dict counts;
      counts["hits"] = s.hits;
      counts["misses"] = s.misses;
      stats[py::str(s.op)] = counts;
    }
    return stats;
  });
  m.def("_unroutable_reason", [](const std::string& op, const py::dict& catalog) {
    return dispatch::TorchCatalog(catalog_options(catalog)).unroutable_reason(op);
  });
  m.def("_native_serves", [](const std::string& op) { return routes::find_native(op).has_value(); });
  // The route kinds a conf names (its routes, includes and default): the
  // import loads FlagGems only when a route may need it.
  m.def("_conf_route_kinds", [](const std::string& conf) {
    const routing::Conf c = routing::load_conf(conf);
    std::set<std::string> kinds;
    for (const auto& e : c.entries) kinds.insert(std::string(routing::name(e.kind)));
    if (c.default_kind) kinds.insert(std::string(routing::name(*c.default_kind)));
    return kinds;
  });
  m.def("_check_conf", [](const std::string& conf, const py::dict& catalog) {
    std::vector<std::string> notes;
    auto t = dispatch::dry_run({conf, catalog_options(catalog)}, notes);
    return py::make_tuple(describe(t), notes);
  });
}

}  // namespace flagos::python
