// torch_fl._C's distributed piece: the tier backends torch_fl.distributed
// builds for a group. The tier choice, the gloo backend it wraps and the
// registration with torch.distributed live in Python (torch_fl/distributed/).
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/utils/pybind.h>

#include "bindings.h"
#include "distributed/comm_backend.h"
#include "distributed/communicator.h"
#include "distributed/gloo_tier_backend.h"

namespace py = pybind11;

namespace flagos::python {

void bind_distributed(py::module_& m) {
  using distributed::Bridge;
  using distributed::GlooTierBackend;
  // torch.distributed registered c10d::Backend with pybind11 at `import torch`;
  // the class derives from it so torch accepts it as a group's backend.
  py::class_<GlooTierBackend, c10d::Backend, c10::intrusive_ptr<GlooTierBackend>>(m, "GlooTierBackend")
      .def(py::init([](const c10::intrusive_ptr<c10d::Backend>& gloo, bool zero_copy) {
             return c10::make_intrusive<GlooTierBackend>(gloo, zero_copy ? Bridge::ZeroCopy : Bridge::Staged);
           }),
           py::arg("gloo"), py::arg("zero_copy"),
           "Serves flagos and CPU tensors through `gloo`, over zero-copy host views "
           "(host-addressable device memory) or staged host copies.")
      .def_property_readonly("zero_copy",
                             [](const GlooTierBackend& b) { return b.bridge_mode() == Bridge::ZeroCopy; })
      .def_property_readonly("gloo", &GlooTierBackend::inner);

  using distributed::CommBackend;
  py::class_<CommBackend, c10d::Backend, c10::intrusive_ptr<CommBackend>>(m, "CommBackend")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, int64_t timeout_ms,
                       const c10::intrusive_ptr<GlooTierBackend>& fallback, int device) {
             py::gil_scoped_release no_gil;  // comm_create waits for the other ranks
             return c10::make_intrusive<CommBackend>(store, rank, size, std::chrono::milliseconds(timeout_ms),
                                                     fallback, device);
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_ms"), py::arg("fallback"),
           py::arg("device"),
           "Serves flagos tensors on the active plugin's communicator (FLAGOS_EXTENSION_COLLECTIVES); "
           "everything else through `fallback`.")
      .def_property_readonly("fallback", &CommBackend::fallback);
  // CommBackend's constructor raises it on every rank of a group whose plugin
  // lacks its communicator library; torch_fl.distributed then picks gloo.
  py::register_exception<distributed::CommUnavailable>(m, "CommUnavailable", PyExc_RuntimeError);
  m.def("has_collectives", [] { return distributed::Communicator::extension() != nullptr; },
        "Whether the active plugin brings its own communicator (FLAGOS_EXTENSION_COLLECTIVES).");
}

}  // namespace flagos::python
