"""Which Inductor codegen a flagos device can take, decided from the
plugin's capabilities (docs/compile.md):

  triton  CUDA-ABI plugins on a CUDA build of torch with Triton: Triton
          kernels launched on the flagos current stream;
  cpp     host-addressable plugins: Inductor's CPU C++/OpenMP code on
          zero-copy host views of the flagos memory;
  None    neither (the strict host plugin, a CUDA-ABI plugin beside a CPU
          torch): compiled graphs run eagerly, said once.
"""

from __future__ import annotations

import functools
import importlib.util

import torch

from torch_fl import _C
from torch_fl.compat import cuda_shim


@functools.lru_cache(maxsize=None)
def _raw(index: int) -> dict:
    return dict(_C._device_properties(index))


def _has(index: int, capability: str) -> bool:
    return capability in _raw(index)["capabilities"]


@functools.lru_cache(maxsize=None)
def _triton_missing() -> str | None:
    """Why Triton cannot compile for this torch's CUDA, or None."""
    if not cuda_shim.native("is_available")():
        return f"this torch ({torch.__version__}) has no usable CUDA"
    if importlib.util.find_spec("triton") is None:
        return "Triton is not installed"
    return None


def interop_cuda_index(index: int) -> int | None:
    """The CUDA device under flagos device ``index``, when torch can use it."""
    if not _has(index, "cuda_abi") or _triton_missing() is not None:
        return None
    return int(_raw(index)["interop_device_index"])


@functools.lru_cache(maxsize=None)
def codegen(index: int = 0) -> str | None:
    if _has(index, "cuda_abi") and _triton_missing() is None:
        return "triton"
    if _has(index, "host_addressable"):
        return "cpp"
    return None


def describe(index: int = 0) -> str:
    """One line: what compiles flagos device ``index``, or why nothing does."""
    name = _C.active_plugin()["name"]
    kind = codegen(index)
    if kind == "triton":
        return f"plugin '{name}': Inductor's Triton codegen on the flagos current stream"
    if kind == "cpp":
        return f"plugin '{name}': Inductor's CPU C++ codegen on zero-copy host views"
    if _has(index, "cuda_abi"):
        return f"plugin '{name}' has no Inductor codegen here: it is CUDA-ABI, but {_triton_missing()}"
    return (f"plugin '{name}' has no Inductor codegen: its memory is neither CUDA-ABI nor "
            "host-addressable")
