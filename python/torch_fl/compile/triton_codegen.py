"""The triton codegen path (CUDA-ABI plugins): Inductor's CUDA scheduling
registered for the flagos device type, with the wrapper's stream, device
and synchronisation lines pointed at torch.flagos, so every Triton kernel
is launched on the flagos current stream (its cudaStream_t, from the plugin).
Buffers are allocated through torch_fl._C._empty_strided, the counterpart
of the fast path Inductor's wrapper has for cuda (it names only in-tree
device types).
"""

from __future__ import annotations

import torch
from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides
from torch._inductor.codegen.cuda.device_op_overrides import CUDADeviceOpOverrides
from torch._inductor.codegen.wrapper import PythonWrapperCodegen


class FlagosDeviceOpOverrides(CUDADeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_fl._C import _current_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.flagos.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.flagos.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.flagos.device({device_idx})"

    def current_stream(self) -> str:
        return "torch.flagos.current_stream()"


_registered = False


class FlagosWrapperCodegen(PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, *args, **kwargs):
        if is_subgraph:
            return PythonWrapperCodegen.create(is_subgraph, subgraph_name, parent_wrapper, *args, **kwargs)
        return FlagosWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.imports.splice("from torch_fl._C import _empty_strided as empty_strided_flagos", strip=True)

    def make_allocation(self, name, device, dtype, shape, stride, *args, **kwargs):
        line = super().make_allocation(name, device, dtype, shape, stride, *args, **kwargs)
        if device.type != "flagos" or not line.startswith(f"{name} = empty_strided("):
            return line
        plain = f"device='{device.type}', dtype={dtype})"
        return line.replace(f"{name} = empty_strided(", f"{name} = empty_strided_flagos(", 1).replace(
            plain, f"{dtype})", 1)


def register() -> None:
    """Idempotent; at the first flagos graph Inductor compiles."""
    global _registered
    if _registered:
        return
    _registered = True
    from torch._inductor import utils
    from torch._inductor.codegen.cpp_wrapper_gpu import CppWrapperGpu
    from torch._inductor.codegen.cuda_combined_scheduling import CUDACombinedScheduling
    from torch._inductor.runtime import hints

    register_device_op_overrides("flagos", FlagosDeviceOpOverrides())
    register_backend_for_device("flagos", CUDACombinedScheduling, FlagosWrapperCodegen, CppWrapperGpu)
    # A GPU device type for the scheduler (fusion, reductions, Triton). The
    # cached get_gpu_type() asserts that one listed type is available: it is
    # asked first, so it keeps answering cuda.
    if "flagos" not in utils.GPU_TYPES:
        utils.get_gpu_type()
        utils.GPU_TYPES.append("flagos")
    # Triton targets the CUDA device under the flagos one.
    original = hints.DeviceProperties.create.__func__

    def create(cls, device):
        if getattr(device, "type", None) == "flagos":
            from torch_fl.compile import _capability
            index = torch.flagos.current_device() if device.index is None else device.index
            return original(cls, torch.device("cuda", _capability.interop_cuda_index(index)))
        return original(cls, device)

    hints.DeviceProperties.create = classmethod(create)
    _pad_matmuls_like_cuda()
    _tune_templates_like_cuda()


def _pad_matmuls_like_cuda() -> None:
    """Inductor's pad_mm pass pads matmul operands to the tensor cores'
    alignment, for CUDA tensors only. Flagos tensors here run the same cuBLAS
    kernels, so they take the pass too: GPT-2's unpadded 50257-wide head
    otherwise gets an alignment-1 kernel at several times the time."""
    from torch._inductor.fx_passes import pad_mm

    original = pad_mm.check_device
    if getattr(original, "_flagos", False):
        return

    def check_device(a: torch.Tensor, b: torch.Tensor) -> bool:
        return original(a, b) or (a.device.type == "flagos" and b.device.type == "flagos")

    check_device._flagos = True
    pad_mm.check_device = check_device

    # The pass's timing of a padded addmm realizes the bias only for CUDA and
    # XPU tensors (input.is_cuda) and calls addmm without one otherwise: on
    # flagos the decision times the matmul alone, as for mm (the bias add is
    # the same work padded or not).
    should_pad = pad_mm._should_pad

    def _should_pad(match, mat1, mat2, op, input=None):
        if op is torch.ops.aten.addmm and mat1.device.type == "flagos":
            return should_pad(match, mat1, mat2, torch.ops.aten.mm, None)
        return should_pad(match, mat1, mat2, op, input)

    pad_mm._should_pad = _should_pad


def _tune_templates_like_cuda() -> None:
    """Inductor picks its Triton templates' block sizes by device type: the
    heuristics for "cuda" know each GPU generation, any other type gets the
    generic ones (flex attention's backward on 16x16 blocks: 2.6x native
    time on an H200). Flagos here is that CUDA GPU, so it takes the CUDA
    tables: the config heuristics, and the template registry's cuda rows."""
    from torch._inductor import choices

    original = choices.InductorChoices.get_config_heuristics
    if not getattr(original, "_flagos", False):
        def get_config_heuristics(self, device_type="cuda"):
            return original(self, "cuda" if device_type == "flagos" else device_type)

        get_config_heuristics._flagos = True
        choices.InductorChoices.get_config_heuristics = get_config_heuristics
    try:  # the per-template registry (torch >= 2.9)
        from torch._inductor.template_heuristics import registry
    except ImportError:
        return
    table = registry._TEMPLATE_HEURISTIC_REGISTRY
    for (template, device, op), cls in list(table.items()):
        if device == "cuda":
            table.setdefault((template, "flagos", op), cls)
    registry._HEURISTIC_CACHE.clear()
