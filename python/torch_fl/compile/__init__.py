"""torch.compile on flagos (docs/compile.md).

``install()`` is one step of the import sequence and imports neither Dynamo
nor Inductor (seconds of import time); it arranges for each registration to
happen when its torch module first loads:
  - torch._dynamo.device_interface: the flagos device interface;
  - torch._dynamo.backends.registry: the "flagos" backend;
  - torch._inductor.compile_fx: flagos graphs get the plugin's codegen path
    (backend.wrap_compile_fx), whichever backend name reached Inductor; the
    Triton codegen of CUDA-ABI plugins is registered at the first of them.
It also sets the compile variables the spec gives torch_fl (_environment);
``check_flagtree()``, an import-time check, asks for FlagTree on ascend.
"""

from __future__ import annotations

from torch_fl import _C
from torch_fl._after_import import after_import

BACKEND_NAME = "flagos"


def _register_interface(module) -> None:
    from torch_fl.compile.device_interface import FlagosInterface
    module.register_interface_for_device("flagos", FlagosInterface)


def _register_backend(module) -> None:
    from torch_fl.compile.backend import flagos
    if BACKEND_NAME not in module._COMPILER_FNS:
        module.register_backend(flagos, name=BACKEND_NAME)


def _wrap_compile_fx(module) -> None:
    from torch_fl.compile.backend import wrap_compile_fx
    wrap_compile_fx(module)


def install(plugin_name: str) -> None:
    from torch_fl.compile import _environment
    _environment.pin(plugin_name)
    if _C._device_count() == 0:
        return
    after_import("torch._dynamo.device_interface", _register_interface)
    after_import("torch._dynamo.backends.registry", _register_backend)
    after_import("torch._inductor.compile_fx", _wrap_compile_fx)


def check_flagtree(plugin_name: str) -> None:
    """FLAGOS_USE_FLAGTREE=1 checked at import where the plugin declares its
    Triton FlagTree's ([triton] flagtree); elsewhere at the first compile."""
    from torch_fl.compile import _environment
    _environment.check_flagtree_at_import(plugin_name)


def codegen(device: int = 0) -> str | None:
    """"triton", "cpp" or None: how Inductor compiles for flagos ``device``."""
    from torch_fl.compile import _capability
    return _capability.codegen(device)
