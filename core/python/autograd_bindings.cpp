// torch_fl._C functions behind torch_fl._autograd: the getAccelerator
// redirect that lets a native-accelerator backward run beside flagos.
#include <c10/core/Device.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "device/autograd_accelerator.h"

namespace py = pybind11;

namespace flagos::python {

void bind_autograd(py::module_& m) {
  m.def("_install_accelerator_redirect", &device::install_accelerator_redirect);
  m.def("_accelerator_redirect_slots", &device::accelerator_redirect_slots);
  m.def("_set_autograd_accelerator", [](std::optional<std::string> type) {
    if (!type) return device::set_autograd_accelerator(std::nullopt);
    device::set_autograd_accelerator(c10::Device(*type).type());
  });
  m.def("_autograd_accelerator", []() -> std::optional<std::string> {
    auto type = device::autograd_accelerator();
    if (!type) return std::nullopt;
    return c10::DeviceTypeName(*type, /*lower_case=*/true);
  });
}

}  // namespace flagos::python
