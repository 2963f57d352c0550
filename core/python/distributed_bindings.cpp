// torch_fl._C's distributed piece: the gloo-tier backend torch_fl.distributed
// builds for a group. The tier choice, the gloo backend it wraps and the
// registration with torch.distributed live in Python (torch_fl/distributed/).
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/utils/pybind.h>

#include "bindings.h"
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
}

}  // namespace flagos::python
