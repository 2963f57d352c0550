"""Apex's multi-tensor kernels on flagos tensors (FLAGOS_DISABLE_APEX_COMPAT).

Apex's fused optimizers and gradient scaling call their CUDA kernels
(``amp_C.multi_tensor_*``) through one entry, ``MultiTensorApply.__call__(op,
noop_flag, tensor_lists, *args)``. Handed flagos tensors, those kernels see a
device they do not know. The patched entry presents the flagos tensors, zero
copy, as tensors of the plugin's stock device (CUDA on CUDA-ABI plugins; the
CPU on host-addressable ones, where only a CPU implementation of the kernels
could run them), runs the kernel ordered after the flagos stream's work, and
returns its tensors as flagos views. Calls on other tensors are untouched.
"""

from __future__ import annotations

import torch

from torch_fl import _C

MODULE = "apex.multi_tensor_apply.multi_tensor_apply"


def _flatten(noop_flag, tensor_lists, args):
    flat = [noop_flag]
    for tensors in tensor_lists:
        flat.extend(tensors)
    flat.extend(a for a in args if isinstance(a, torch.Tensor))
    return flat


def _rebuild(views, tensor_lists, args):
    noop_flag, rest = views[0], iter(views[1:])
    lists = [[next(rest) for _ in tensors] for tensors in tensor_lists]
    return noop_flag, lists, [next(rest) if isinstance(a, torch.Tensor) else a for a in args]


def install(module) -> None:
    cls = module.MultiTensorApply
    original = cls.__call__
    if getattr(original, "_flagos", False):
        return

    def __call__(self, op, noop_flag_buffer, tensor_lists, *args):
        flat = _flatten(noop_flag_buffer, tensor_lists, args)
        if not any(t.device.type == "flagos" for t in flat):
            return original(self, op, noop_flag_buffer, tensor_lists, *args)

        def run(views):
            noop_flag, lists, rest = _rebuild(views, tensor_lists, args)
            return op(self.chunk_size, noop_flag, lists, *rest)

        return _C._boxed_call(run, flat, f"apex {getattr(op, '__name__', 'multi-tensor kernel')}")

    __call__._flagos = True
    __call__.__doc__ = original.__doc__
    cls.__call__ = __call__


def applies() -> bool:
    """Whether the plugin has a stock device the kernels could read flagos memory from."""
    caps = _C._device_properties(0)["capabilities"]  # no device initialisation at import
    return "cuda_abi" in caps or "host_addressable" in caps
