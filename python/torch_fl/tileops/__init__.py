"""The `tileops` route (docs/routing.md, "TileOps"): aten operators served by
TileOps (the PyPI ``tileops`` package: op classes on TileLang, Hopper only).

At import, before routes are installed, each operator of ``table.OPS``
becomes a Python implementation the core may call for the `tileops` kind,
when a route may need one: the conf in use routes an op to tileops,
FLAGOS_FORCE_BACKEND=tileops, or a FLAGOS_OP_<op>=tileops. It needs this
build's TileOps switch (FLAGOS_BUILD_TILEOPS), the package, a CUDA-ABI
plugin on a CUDA torch and an SM90 device; without one of them nothing is
registered, routes naming tileops take their next route with one line, and
FLAGOS_FORCE_BACKEND=tileops makes the annotated operators raise.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Optional

import torch

from torch_fl import _C, _build_config_reader, _env, _routing
from torch_fl.tileops import calls, table

# What TileOps needs of the device: its kernels are written for Hopper.
REQUIRED_CAPABILITY = (9, 0)

_impls: dict = {}  # op -> implementation; the core's registry for the tileops kind
_C._set_python_registry(_impls, "tileops")
_status = "not loaded"
_calls: Optional[calls.Calls] = None


def switch() -> tuple[bool, str]:
    """Whether this build compiled the tileops route (FLAGOS_BUILD_TILEOPS)."""
    return _build_config_reader.kernel_switch("tileops", "FLAGOS_BUILD_TILEOPS")


def device_problem(index: int = 0) -> str:
    """Why TileOps' kernels cannot run on flagos device ``index`` ("" when they can)."""
    if _C.active_plugin() is None or _C._device_count() <= index:
        return "no flagos device"
    props = dict(_C._device_properties(index))
    if "cuda_abi" not in props["capabilities"]:
        return f"plugin '{_C.active_plugin()['name']}' memory is not CUDA-ABI (TileOps runs CUDA kernels)"
    if not torch.backends.cuda.is_built():
        return f"the installed torch ({torch.__version__}) has no CUDA"
    have = (props["major"], props["minor"])
    if have != REQUIRED_CAPABILITY:
        return (f"TileOps' kernels are for SM{REQUIRED_CAPABILITY[0]}{REQUIRED_CAPABILITY[1]} (Hopper); "
                f"flagos device {index} is SM{have[0]}{have[1]}")
    return ""


def prepare_environment() -> None:
    """What must hold before tileops (and TileLang) are imported."""
    if _env.get("FLAGOS_TILEOPS_DISABLE_ALL_CACHE"):
        _env.set_foreign("TILELANG_DISABLE_CACHE", "1")


def settings() -> tuple[int, bool]:
    """(instance-cache capacity, whether calls stay on the op layer)."""
    if _env.get("FLAGOS_TILEOPS_DISABLE_ALL_CACHE"):
        return 0, True
    return int(_env.get("FLAGOS_TILEOPS_CACHE_MAX")), bool(_env.get("FLAGOS_TILEOPS_USE_L2"))


def load(force: bool = False) -> int:
    """Registers the implementations when a route may need them (or
    ``force``: a conf being checked names tileops); returns how many."""
    global _status, _calls
    why = _routing.why_not_load("tileops", switch(), force)
    if why:
        _status = why
        return 0
    if importlib.util.find_spec("tileops") is None:
        _status = "tileops is not installed (pip install tileops)"
        return 0
    problem = device_problem()
    if problem:
        _status = problem
        return 0
    prepare_environment()
    try:
        tileops = importlib.import_module("tileops")
        refusals = tuple(getattr(tileops, n) for n in ("BackendError", "OpNotAvailableError")
                         if isinstance(getattr(tileops, n, None), type))
    except Exception as exc:  # a broken install is a finding, not an import failure of torch_fl
        _status = f"tileops does not import ({type(exc).__name__}: {exc})"
        return 0
    cache_max, op_layer = settings()
    _calls = calls.Calls(cache_max, op_layer, refusals + (TypeError, ValueError, NotImplementedError))
    for name, entry in table.OPS.items():
        _impls[name] = _implementation(name, entry)
    _status = (f"{len(_impls)} operators from tileops {getattr(tileops, '__version__', '?')}"
               f" (instance cache {cache_max}{', op layer' if op_layer else ''})")
    return len(_impls)


def _implementation(name: str, entry: table.Entry):
    base, _, overload = name.partition(".")
    aten = getattr(getattr(torch.ops.aten, base), overload or "default")
    cls = None

    def make_op(params: dict):
        nonlocal cls
        if cls is None:
            cls = getattr(importlib.import_module(f"tileops.{entry.family}"), entry.cls)
        return cls(**params)

    return _calls.implementation(name, entry, aten._schema, make_op, aten, _say_decline)


def _say_decline(op: str, why: str) -> None:
    if "dispatch" in (_env.get("FLAGOS_LOG") or ()):
        print(f"[flagos] dispatch: aten::{op} -> tileops declined a call ({why}); torch's CUDA kernel ran it",
              file=sys.stderr)


def status() -> str:
    return _status


def ops() -> list[str]:
    """The operators the tileops route implements (whether or not it can run here)."""
    return sorted(table.OPS)


def unavailable_reason() -> str:
    """Why the `tileops` route cannot run in this process ("" when it can)."""
    enabled, reason = switch()
    if not enabled:
        return reason
    return "" if _impls else _status


def stats() -> dict:
    """What the route's calls did so far: specializations kept, op instances
    built, specializations TileOps refused, and per operator the first reason
    a call ran torch's kernel instead."""
    if _calls is None:
        return {"status": _status}
    return {"status": _status, "cached": len(_calls.specializations),
            "shortcuts": sum(s.kernel is not None for s in _calls.specializations.values()),
            "built": _calls.built, "refused": len(_calls.refused), "declined": dict(_calls.declined)}
