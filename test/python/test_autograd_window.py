"""The accelerator torch's autograd engine sees (torch_fl._autograd).

A backward whose roots live on native CUDA must run with the engine seeing
CUDA (pytorch#161129: otherwise it asserts in a torch_fl process); every
other moment keeps torch's answer, flagos. This machine has no CUDA, so the
CUDA side is a wrapper tensor that only says it lives on cuda, and torch's
backward entry is replaced by a recorder for it; test/gpu/test_coexistence_cuda.py
trains native CUDA models for real.
"""

from __future__ import annotations

import threading

import pytest
import torch
import torch.autograd.graph as graph

import torch_fl  # noqa: F401
from torch_fl import _C, _autograd


class OnCuda(torch.Tensor):
    """Says it lives on cuda; never computes."""

    @staticmethod
    def __new__(cls):
        return torch.Tensor._make_wrapper_subclass(cls, (2,), device="cuda")

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(func)


@pytest.fixture
def recorder(monkeypatch):
    """torch's backward for OnCuda roots records what the engine would see;
    flagos roots still run torch's real backward."""
    seen = []
    block = threading.Event()
    block.set()
    real = _autograd._torch_run_backward

    def run(roots, *args, **kwargs):
        if any(isinstance(r, OnCuda) for r in roots):
            seen.append((torch.accelerator.current_accelerator().type, _C._autograd_accelerator()))
            block.wait(10)
            return ()
        return real(roots, *args, **kwargs)

    monkeypatch.setattr(_autograd, "_torch_run_backward", run)
    return seen, block


def test_redirect_is_installed_in_torchs_libraries():
    assert _autograd.redirect_error() is None
    assert _C._accelerator_redirect_slots() >= 2  # libtorch_cpu (the engine) and libtorch_python
    assert graph._engine_run_backward is _autograd._run_backward
    assert torch.autograd._engine_run_backward is _autograd._run_backward


def test_outside_a_backward_torch_answers_flagos():
    assert torch.accelerator.current_accelerator().type == "flagos"
    assert _C._autograd_accelerator() is None


def test_a_backward_on_cuda_roots_sees_cuda_and_restores(recorder):
    seen, _ = recorder
    graph._engine_run_backward((OnCuda(),), (None,), False, False, (), allow_unreachable=True,
                               accumulate_grad=True)
    assert seen == [("cuda", "cuda")]
    assert torch.accelerator.current_accelerator().type == "flagos"
    # torch's own libraries ask the redirected function: under the window they
    # reach for CUDA streams (which a CPU torch does not have).
    _C._set_autograd_accelerator("cuda")
    try:
        if torch.backends.cuda.is_built():
            assert torch._C._accelerator_getStream(0).device.type == "cuda"
        else:
            with pytest.raises(Exception, match="(?i)cuda"):
                torch._C._accelerator_getStream(0)
    finally:
        _C._set_autograd_accelerator(None)
    assert torch._C._accelerator_getStream(0).device.type == "flagos"


def test_flagos_backward_waits_for_an_open_cuda_window(recorder):
    seen, block = recorder
    block.clear()
    cuda_side = threading.Thread(target=graph._engine_run_backward,
                                 args=((OnCuda(),), (None,), False, False, ()),
                                 kwargs={"allow_unreachable": True, "accumulate_grad": True})
    cuda_side.start()
    while not seen:
        threading.Event().wait(0.01)
    order = []

    def flagos_side():
        x = torch.ones(3, device="flagos", requires_grad=True)
        (x * 3).sum().backward()
        order.append(("flagos done", _C._autograd_accelerator(), x.grad.cpu().tolist()))

    other = threading.Thread(target=flagos_side)
    other.start()
    other.join(0.3)
    assert other.is_alive() and not order  # held while the cuda window is open
    order.append("cuda released")
    block.set()
    cuda_side.join(10)
    other.join(10)
    assert order == ["cuda released", ("flagos done", None, [3.0, 3.0, 3.0])]


def test_a_cuda_backward_inside_a_flagos_backward_raises(recorder):
    class Inner(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            graph._engine_run_backward((OnCuda(),), (None,), False, False, (), allow_unreachable=True,
                                       accumulate_grad=True)
            return g

    x = torch.ones(2, device="flagos", requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[flagos\] a backward on 'cuda' started inside a backward on 'flagos'"):
        Inner.apply(x).sum().backward()
    # The process stays usable: the next backward runs with torch's answer.
    y = torch.ones(2, device="flagos", requires_grad=True)
    (y * 2).sum().backward()
    assert y.grad.cpu().tolist() == [2.0, 2.0]
    assert _C._autograd_accelerator() is None


def test_cpu_backward_takes_no_window(recorder):
    x = torch.ones(2, requires_grad=True)
    assert _autograd._roots_type((x,)) is None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
