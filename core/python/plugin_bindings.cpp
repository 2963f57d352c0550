// torch_fl._C plugin functions: discovery, activation, the active plugin.
#include <pybind11/stl.h>

#include "bindings.h"
#include "plugin/loader.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

using EntryPoints = std::vector<std::pair<std::string, std::string>>;

std::vector<plugin::Candidate> to_candidates(const EntryPoints& entry_points) {
  std::vector<plugin::Candidate> out;
  for (const auto& [name, path] : entry_points) out.push_back({name, path, plugin::Origin::EntryPoint});
  return out;
}

const char* origin_name(plugin::Origin origin) {
  switch (origin) {
    case plugin::Origin::BuildDir: return "build";
    case plugin::Origin::EntryPoint: return "entry_point";
    case plugin::Origin::Explicit: return "explicit";
  }
  return "?";
}

py::dict describe(const plugin::Plugin& p) {
  const flagos_plugin_api_t& api = p.api();
  py::dict d;
  d["name"] = p.name();
  d["path"] = p.path();
  d["origin"] = origin_name(p.origin());
  d["version"] = api.version ? api.version : "";
  d["abi"] = std::to_string(api.abi_major) + "." + std::to_string(api.abi_minor);
  d["effective_minor"] = p.effective_minor();
  d["device_count"] = p.device_count();
  d["device_note"] = p.device_note();
  py::dict options;
  for (const auto& [k, v] : p.options()) options[py::str(k)] = v;
  d["options"] = options;
  if (plugin::active().get() == &p) d["selection"] = plugin::selection();
  return d;
}

}  // namespace

void bind_plugins(py::module_& m) {
  m.def("search_dirs", &plugin::default_search_dirs,
        "Directories scanned for plugins/<name>/libflagos_<name>.so");
  m.def("discover", [](const EntryPoints& entry_points) {
    py::list out;
    for (const auto& c : plugin::discover(plugin::default_search_dirs(), to_candidates(entry_points))) {
      py::dict d;
      d["name"] = c.name;
      d["path"] = c.path;
      d["origin"] = origin_name(c.origin);
      if (!c.unavailable.empty()) d["unavailable"] = c.unavailable;
      out.append(d);
    }
    return out;
  });
  m.def("activate", [](const EntryPoints& entry_points) {
    return describe(*plugin::activate(to_candidates(entry_points), plugin::default_search_dirs()));
  });
  // Loads a discovered plugin (not activating it) to describe it: device
  // count and why. Raises with the loader's message when it cannot load.
  m.def("inspect_plugin", [](const std::string& name, const std::string& path) {
    return describe(*plugin::load({name, path, plugin::Origin::BuildDir}, plugin::options_from_env()));
  });
  m.def("active_plugin", []() -> py::object {
    auto p = plugin::active();
    return p ? py::object(describe(*p)) : py::none();
  });
}

}  // namespace flagos::python
