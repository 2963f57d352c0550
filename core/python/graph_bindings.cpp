// torch_fl._C's graph capture: the core Graph (device/graph.h) for
// torch.flagos.FlagosGraph, pool handles, the capture query, and what
// graphs.py needs to route torch's own CUDA allocator on CUDA-ABI plugins.
#include <pybind11/stl.h>

#include "bindings.h"
#include "device/graph.h"
#include "device/runtime.h"
#include "device/streams.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

using device::Graph;
using device::PoolId;

c10::Stream current() {
  return device::current_stream(static_cast<c10::DeviceIndex>(device::current_device()));
}

// On CUDA-ABI plugins: (torch's CUDA device index, the cudaStream_t of the
// current flagos stream as an int), for torch.cuda.ExternalStream; else None.
py::object current_cuda_stream() {
  const auto device = static_cast<c10::DeviceIndex>(device::current_device());
  if (!device::has_capability(device, FLAGOS_CAP_CUDA_ABI)) return py::none();
  const plugin::Plugin& plugin = device::active_plugin();
  void* handle = nullptr;
  plugin.check(plugin.api().stream_native_handle(device::native(device::current_stream(device)), &handle),
               "stream_native_handle");
  return py::make_tuple(device::properties(device).interop_device_index,
                        reinterpret_cast<uintptr_t>(handle));
}

}  // namespace

void bind_graphs(py::module_& m) {
  py::class_<Graph>(m, "_FlagosGraph")
      .def(py::init<>())
      .def("capture_begin", &Graph::capture_begin, py::arg("pool") = PoolId{0, 0})
      .def("capture_end", &Graph::capture_end)
      .def("replay", &Graph::replay)
      .def("reset", &Graph::reset)
      .def("pool", &Graph::pool)
      .def("capturing", &Graph::capturing);
  m.def("_graph_pool_handle", &device::graph_pool_handle);
  m.def("_is_current_stream_capturing", [] { return device::is_capturing(current()); });
  m.def("_graphs_check", [] { device::graphs_extension(); },
        "Raises the reason when the active plugin cannot capture graphs.");
  m.def("_graph_current_cuda_stream", &current_cuda_stream);
}

}  // namespace flagos::python
