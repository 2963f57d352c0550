// torch_fl._C testing hooks (FLAGOS_EXTENSION_TESTING) for the torch-level
// suite: they make asynchrony observable, e.g. a non_blocking copy queued
// behind a delayed stream must return before the delay ends. Never used by
// production paths.
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>

#include "bindings.h"
#include "device/runtime.h"
#include "device/streams.h"
#include "error.h"
#include "flagos/ext/testing.h"

namespace py = pybind11;

namespace flagos::python {
namespace {

const flagos_testing_ext_t* testing_ext() {
  const auto* ext = device::active_plugin().find_extension(FLAGOS_EXTENSION_TESTING);
  if (!ext || ext->struct_size < sizeof(flagos_testing_ext_t)) return nullptr;
  return reinterpret_cast<const flagos_testing_ext_t*>(ext);
}

void enqueue_delay(const c10::Stream& stream, uint64_t microseconds) {
  if (stream.device_type() != c10::DeviceType::PrivateUse1)
    throw Error("stream_enqueue_delay needs a flagos stream, got one on " + stream.device().str());
  const auto* ext = testing_ext();
  if (!ext || !ext->stream_enqueue_delay)
    throw Error("plugin '" + device::active_plugin().name() +
                "' has no testing extension (stream_enqueue_delay)");
  device::active_plugin().check(ext->stream_enqueue_delay(device::native(stream), microseconds),
                                "stream_enqueue_delay");
}

}  // namespace

void bind_testing(py::module_& m) {
  m.def("_testing_has_delay", [] {
    const auto* ext = testing_ext();
    return ext != nullptr && ext->stream_enqueue_delay != nullptr;
  });
  m.def("_testing_enqueue_delay", &enqueue_delay, py::arg("stream"), py::arg("microseconds"),
        "Pauses `stream` (a flagos torch.Stream) for `microseconds` before its later work.");
}

}  // namespace flagos::python
