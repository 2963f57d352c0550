// Each concept binds itself into torch_fl._C.
#pragma once

#include <pybind11/pybind11.h>

namespace flagos::python {

void bind_plugins(pybind11::module_& m);
void bind_env(pybind11::module_& m);
void bind_device(pybind11::module_& m);
void bind_routing(pybind11::module_& m);
void bind_distributed(pybind11::module_& m);  // the "flagos" backend's gloo tiers
void bind_compile(pybind11::module_& m);  // the compile backend's host path
void bind_graphs(pybind11::module_& m);   // graph capture (torch.flagos.FlagosGraph)
void bind_autograd(pybind11::module_& m);  // the accelerator autograd sees (torch_fl._autograd)
void bind_compat(pybind11::module_& m);    // extension kernels on flagos bytes (torch_fl.compat)
void bind_testing(pybind11::module_& m);  // suite-only hooks (testing extension)

}  // namespace flagos::python
