// torch_fl._C functions behind torch_fl.compat: an extension's kernel called
// on a flagos tensor's bytes through the plugin's stock device, the way the
// cpu and cuda routes call torch's kernels (routes/boxing_call.h).
#include <torch/csrc/autograd/python_variable.h>

#include "bindings.h"
#include "device/runtime.h"
#include "routes/boxing.h"
#include "routes/boxing_call.h"
#include "error.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

// `result` with every target-device tensor in it (nested in tuples and lists)
// turned back into a flagos tensor.
py::object unbox_all(const routes::BoxingCall& call, const py::handle& result) {
  if (THPVariable_Check(result.ptr()))
    return py::reinterpret_steal<py::object>(THPVariable_Wrap(call.unbox(THPVariable_Unpack(result.ptr()))));
  if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
    py::list out;
    for (py::handle item : result) out.append(unbox_all(call, item));
    return py::isinstance<py::tuple>(result) ? py::object(py::tuple(out)) : py::object(out);
  }
  return py::reinterpret_borrow<py::object>(result);
}

// Calls `fn(views)`: `tensors`' flagos tensors presented, zero-copy, as
// tensors of the plugin's stock device (cuda on CUDA-ABI plugins, cpu on
// host-addressable ones), ordered after the device's queued work (cuda: on
// the flagos current stream; cpu: after it finished). What `fn` returns comes
// back with its tensors on flagos. `name` names the kernel in errors.
py::object boxed_call(const py::function& fn, const std::vector<at::Tensor>& tensors, const std::string& name) {
  c10::DeviceIndex device = -1;
  for (const at::Tensor& t : tensors)
    if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) {
      device = t.device().index();
      break;
    }
  if (device < 0) return fn(tensors);
  const auto target = routes::stock_target(device);
  if (!target)
    throw Error(name + ": plugin '" + device::active_plugin().name() +
                "' has no stock device whose kernels can read its memory (neither CUDA-ABI with a "
                "CUDA torch nor host-addressable)");
  routes::BoxingCall call(*target, device, /*recycle_aliases=*/false);
  call.reserve(tensors.size());
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& t : tensors) views.push_back(t.defined() ? call.box(t, false, true) : t);
  py::object result;
  call.run(routes::OpTraits(name), [&] { result = fn(views); });
  return unbox_all(call, result);
}

}  // namespace

void bind_compat(py::module_& m) {
  m.def("_boxed_call", &boxed_call, py::arg("fn"), py::arg("tensors"), py::arg("name"));
}

}  // namespace flagos::python
