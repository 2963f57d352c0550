"""How one aten call becomes one TileOps call.

The core calls a `tileops` route's implementation with the operator's
arguments already boxed to zero-copy CUDA views, on torch's current CUDA
stream (the flagos current stream), as for the `flaggems` route.

Two tiers per call, after TileOps' own layering: the *op layer* (an op
instance's ``__call__``: argument checks, the call spec, the kernel lookup;
tens of microseconds of Python per call, which a memory-bound kernel cannot
hide) and the *kernel* that layer hands out for a specialization. The first
call of a specialization goes through the op layer and records which kernel
it ran; later calls run that kernel directly, but only where the record shows
the op layer did nothing else (one kernel, called with the operands
themselves, its result returned as is). FLAGOS_TILEOPS_USE_L2=1 keeps every
call on the op layer.

Specializations (operator, parameters, operand shapes, strides and dtypes)
are kept up to FLAGOS_TILEOPS_CACHE_MAX; past it a call builds its op
instance afresh and drops it (TileLang's own kernel cache still spares the
compile), so memory stays bounded.

A call TileOps does not take (dtype, mixed dtypes, a non-contiguous or
empty operand, a parameter it has no equivalent for, or TileOps refusing the
specialization) runs torch's CUDA kernel on the same views: what the `cuda`
route would have run.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from torch_fl.tileops.table import Entry


class Specialization:
    """An op instance for one specialization, and its kernel when calling
    that directly is verified to be what the op layer does."""

    __slots__ = ("op", "kernel")

    def __init__(self, op: object, kernel: Optional[Callable]):
        self.op = op
        self.kernel = kernel

    def __call__(self, *tensors):
        return self.kernel(*tensors) if self.kernel is not None else self.op(*tensors)


def first_call(op: object, tensors: tuple) -> tuple[object, Optional[Callable]]:
    """Runs ``op(*tensors)`` through its op layer, watching which kernels the
    layer fetches (``kernel_for``) and how it calls them. Returns the result
    and the kernel when the shortcut reproduces the call exactly, else None."""
    seen: list[tuple[Callable, tuple, dict, object]] = []
    fetch = getattr(op, "kernel_for", None)
    if fetch is None:
        return op(*tensors), None

    def watched(*args, **kwargs):
        kernel = fetch(*args, **kwargs)

        def run(*a, **kw):
            out = kernel(*a, **kw)
            seen.append((kernel, a, kw, out))
            return out

        return run

    op.kernel_for = watched  # an instance attribute shadows the method for this call only
    try:
        result = op(*tensors)
    finally:
        del op.kernel_for
    if len(seen) != 1:
        return result, None
    kernel, args, kwargs, out = seen[0]
    same_operands = len(args) == len(tensors) and all(a is t for a, t in zip(args, tensors))
    return result, (kernel if same_operands and not kwargs and out is result else None)


class Calls:
    """Every specialization built in this process, shared by the operators."""

    def __init__(self, cache_max: int, op_layer: bool, refusals: tuple[type, ...], device_type: str = "cuda"):
        self.cache_max = max(0, cache_max)
        self.device_type = device_type  # where the boxed operands live
        self.op_layer = op_layer  # FLAGOS_TILEOPS_USE_L2
        self.refusals = refusals  # the exception types meaning "TileOps does not take this call"
        self.specializations: dict[tuple, Specialization] = {}
        self.refused: dict[tuple, str] = {}
        self.built = 0  # op instances made, cached or not
        self.declined: dict[str, str] = {}  # op -> the first reason a call of it ran torch's kernel

    def implementation(self, name: str, entry: Entry, schema: torch._C.FunctionSchema,
                       make_op: Callable[[dict], object], fallback: Callable,
                       on_decline: Callable[[str, str], None]) -> Callable:
        """The Python implementation of aten ``name`` the core calls."""
        names = [a.name for a in schema.arguments]
        defaults = {a.name: a.default_value for a in schema.arguments if a.has_default_value()}

        def decline(why: str, args, kwargs):
            if name not in self.declined:
                self.declined[name] = why
                on_decline(name, why)
            return fallback(*args, **kwargs)

        def call(*args, **kwargs):
            values = dict(zip(names, args), **kwargs)
            tensors = args[:entry.tensors]
            why = _unsupported(entry, tensors, values, defaults, self.device_type)
            if why:
                return decline(why, args, kwargs)
            params = tuple(values.get(aten, defaults.get(aten, default)) for _, aten, default in entry.params)
            key = (name, params, tuple((t.shape, t.stride(), t.dtype) for t in tensors))
            found = self.specializations.get(key)
            if found is not None:
                return found(*tensors)
            if key in self.refused:
                return decline(self.refused[key], args, kwargs)
            op = make_op({kw: value for (kw, _, _), value in zip(entry.params, params)})
            self.built += 1
            try:
                result, kernel = first_call(op, tensors)
            except self.refusals as exc:
                if len(self.refused) < max(self.cache_max, 1):
                    self.refused[key] = f"TileOps refused it: {type(exc).__name__}: {exc}"
                return decline(f"TileOps refused it: {type(exc).__name__}: {exc}", args, kwargs)
            if len(self.specializations) < self.cache_max:
                self.specializations[key] = Specialization(op, None if self.op_layer else kernel)
            return result

        call.__name__ = f"tileops_{name.replace('.', '_')}"
        return call


def _unsupported(entry: Entry, tensors: tuple, values: dict, defaults: dict, device_type: str) -> str:
    """Why this call is not one the entry's TileOps class computes ("" when it is)."""
    dtype = None
    for t in tensors:
        if not isinstance(t, torch.Tensor) or t.device.type != device_type:
            return "an operand is not a device tensor"
        if not t.is_contiguous():
            return "a non-contiguous operand"
        if t.numel() == 0:
            return "an empty operand"
        if dtype is not None and t.dtype != dtype:
            return "operands of different dtypes"
        dtype = t.dtype
    if str(dtype).removeprefix("torch.") not in entry.dtypes:
        return f"dtype {str(dtype).removeprefix('torch.')} (TileOps' class takes {', '.join(entry.dtypes)})"
    for arg, only in entry.fixed:
        if values.get(arg, defaults.get(arg, only)) != only:
            return f"{arg}={values.get(arg)} (TileOps computes only {arg}={only})"
    return ""
