// torch_fl._C functions of the compile backend's host path
// (python/torch_fl/compile/host.py): a graph Inductor compiled for the CPU
// runs on the flagos tensors of a host-addressable plugin, zero-copy, with the
// cpu boxing route's machinery (routes/boxing_call.h).
#include <ATen/EmptyTensor.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <vector>

#include "bindings.h"
#include "device/device_allocator.h"
#include "device/generator.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "routes/boxing.h"
#include "routes/host_allocation.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

bool on_flagos(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// Runs `fn(args)` (Inductor's boxed calling convention) with every flagos
// tensor of `args` presented as a CPU tensor over the same bytes, after the
// device's queued work, with CPU allocations made from flagos memory (and,
// when `seeded`, CPU random draws from the flagos generator). Result i comes back as a flagos
// tensor where `flagos_results[i]` (a view onto its operand's storage, or
// its flagos-allocated memory re-labelled), else as it is.
py::object host_call(const py::function& fn, const py::list& args, int device,
                     const std::vector<bool>& flagos_results, bool seeded) {
  const auto d = static_cast<c10::DeviceIndex>(device);
  routes::BoxingCall call(routes::BoxingTarget::Cpu, d, /*recycle_aliases=*/false);
  py::list boxed(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    PyObject* item = args[i].ptr();
    if (THPVariable_Check(item) && on_flagos(THPVariable_Unpack(item))) {
      boxed[i] = py::reinterpret_steal<py::object>(THPVariable_Wrap(call.box(THPVariable_Unpack(item))));
    } else {
      boxed[i] = args[i];
    }
  }
  args.attr("clear")();  // the convention: the callee frees its inputs as it goes
  py::object results;
  {
    routes::wait_for_stream(d);
    routes::HostAllocationScope allocation(d);
    device::SeededCpuScope rng(d, seeded);
    results = fn(boxed);
  }
  py::list out;
  size_t i = 0;
  for (py::handle r : results) {
    PyObject* item = r.ptr();
    const bool want = i < flagos_results.size() && flagos_results[i];
    if (want && THPVariable_Check(item)) {
      out.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(call.unbox(THPVariable_Unpack(item)))));
    } else {
      out.append(r);
    }
    ++i;
  }
  return out;
}

c10::SmallVector<int64_t, 8> int_tuple(PyObject* tuple) {
  const Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  c10::SmallVector<int64_t, 8> out(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i));
  return out;
}

// Inductor's wrapper allocates every buffer: torch's own fast path (as
// torch._C._dynamo.guards._empty_strided_cuda is for cuda), a few µs less
// per buffer than torch.empty_strided's argument parsing and dispatch.
PyObject* empty_strided(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) || !THPDtype_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "[flagos] _empty_strided(size: tuple, stride: tuple, dtype)");
    return nullptr;
  }
  try {
    const auto sizes = int_tuple(args[0]);
    const auto strides = int_tuple(args[1]);
    const auto dtype = reinterpret_cast<THPDtype*>(args[2])->scalar_type;
    return THPVariable_Wrap(at::detail::empty_strided_generic(
        sizes, strides, device::allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype));
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

PyMethodDef g_empty_strided{"_empty_strided", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(&empty_strided)),
                            METH_FASTCALL, "A flagos tensor of the current device: (size, stride, dtype)."};

}  // namespace

void bind_compile(py::module_& m) {
  m.def("_host_call", &host_call, py::arg("fn"), py::arg("args"), py::arg("device"),
        py::arg("flagos_results"), py::arg("seeded") = false);
  // The native stream handle (cudaStream_t) of `device`'s current flagos
  // stream on CUDA-ABI plugins, for Triton launches; 0 elsewhere.
  m.def("_current_raw_stream", [](int device) -> intptr_t {
    const auto d = static_cast<c10::DeviceIndex>(device);
    if (!device::has_capability(d, FLAGOS_CAP_CUDA_ABI)) return 0;
    return static_cast<intptr_t>(device::current_cuda_stream(d).id());
  });
  m.add_object("_empty_strided", py::reinterpret_steal<py::object>(PyCFunction_New(&g_empty_strided, nullptr)));
  // A CPU tensor over flagos tensor `t`'s bytes (host-addressable plugins);
  // the caller keeps `t` alive as long as the view is used.
  m.def("_host_view", [](const at::Tensor& t) { return routes::boxed_view(t, routes::BoxingTarget::Cpu); });
}

}  // namespace flagos::python
