"""A backward on native CUDA (or another torch accelerator) beside flagos.

torch's autograd engine orders streams only for the device type
``at::accelerator::getAccelerator()`` names, and that is PrivateUse1 once
flagos is registered: a CUDA backward in a process that imported torch_fl
fails ``opt_ready_stream && opt_parent_stream`` (pytorch#161129, unfixed in
2.11 and 2.13). The core redirects torch's calls to getAccelerator
(core/device/autograd_accelerator.h); this module opens a window around each
backward whose roots live on another accelerator, during which the engine
sees that device type. Windows of different device types never overlap:
one waits for the other (process-wide answer), and a nested backward of
another type raises instead of deadlocking. A single backward whose roots
mix flagos and another accelerator cannot be ordered for both; it runs as
flagos (torch has one accelerator per backward).
"""

from __future__ import annotations

import threading

import torch

from torch_fl import _C

# Device types torch's engine treats as accelerators, besides flagos itself.
_OTHER_ACCELERATORS = frozenset({"cuda", "xpu", "mps", "mtia", "hpu"})

_cond = threading.Condition()
_active: str | None = None  # device type of the open windows
_count = 0
_torch_run_backward = None
_install_error: str | None = None


def _roots_type(roots) -> str | None:
    """The accelerator a backward's roots live on: another accelerator's
    type, "flagos" (also for gradient edges and for a mix torch cannot
    order for both), or None when every root is on the CPU."""
    found = None
    for root in roots:
        if not isinstance(root, torch.Tensor):
            return "flagos"
        kind = root.device.type
        if kind == "flagos":
            return "flagos"
        if kind not in _OTHER_ACCELERATORS:
            continue
        if found is not None and found != kind:
            return "flagos"
        found = kind
    return found


def _enter(kind: str) -> None:
    global _active, _count
    with _cond:
        if _count and _active != kind and torch._C._current_graph_task_id() != -1:
            raise RuntimeError(
                f"[flagos] a backward on '{kind}' started inside a backward on '{_active}': torch's "
                "autograd engine orders streams for one accelerator at a time (pytorch#161129); "
                "run the inner backward after the outer one")
        while _count and _active != kind:
            _cond.wait()
        if not _count:
            if kind != "flagos":
                _C._install_accelerator_redirect()  # picks up libraries loaded since import
                _C._set_autograd_accelerator(kind)
            _active = kind
        _count += 1


def _leave() -> None:
    global _active, _count
    with _cond:
        _count -= 1
        if not _count:
            if _active != "flagos":
                _C._set_autograd_accelerator(None)
            _active = None
            _cond.notify_all()


def _run_backward(t_outputs, *args, **kwargs):
    kind = _roots_type(t_outputs)
    if kind is None:  # CPU nodes never ask for a stream
        return _torch_run_backward(t_outputs, *args, **kwargs)
    _enter(kind)
    try:
        return _torch_run_backward(t_outputs, *args, **kwargs)
    finally:
        _leave()


def install() -> None:
    """Redirects getAccelerator and wraps torch's backward entry (once).
    Where the redirect cannot be installed, torch's behaviour stays and
    ``redirect_error()`` says why."""
    global _torch_run_backward, _install_error
    if _torch_run_backward is not None or _install_error is not None:
        return
    error = _C._install_accelerator_redirect()
    if error:
        _install_error = error
        return
    import torch.autograd.graph as graph

    _torch_run_backward = graph._engine_run_backward
    # torch.autograd imported the name; both bindings are what backward()/grad() call.
    graph._engine_run_backward = _run_backward
    torch.autograd._engine_run_backward = _run_backward


def redirect_error() -> str | None:
    """Why a backward on another accelerator cannot run beside flagos, or None."""
    return _install_error
