"""Wrappers around single FlagGems functions that are wrong for arguments
torch hands them, applied as _flaggems.py registers them for the flaggems
route. Each names its bug and stays right on a FlagGems that has fixed it, so
none is tied to a version. (The operand layouts every pointwise op gets are
the core's business: core/routes/flaggems_operands.h.)
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import torch


def layer_norm_backward_in_rows(fn: Callable) -> Callable:
    """native_layer_norm_backward with its input and gradient handed over as a
    (rows, N) matrix, N the normalized size, and the input's gradient given
    back in the input's shape.

    FlagGems 5.0.2 (and its master as of 2026-08) takes input.shape[0] as the
    row count. For a (batch, sequence, hidden) input that makes every gradient
    wrong, and its weight/bias kernel writes past their buffers into other
    tensors (FlagGems #5392, PR #5474): a GPT-2 backward under
    cuda_flaggems.toml overwrites its own loss.
    """

    @functools.wraps(fn)
    def in_rows(grad_out, input, normalized_shape, mean, rstd, weight=None, bias=None, output_mask=None):
        mask = list(output_mask) if output_mask is not None else [True, True, True]
        if input.numel() == 0:  # FlagGems divides by the row count
            return (torch.empty_like(input) if mask[0] else None,
                    torch.zeros_like(weight) if mask[1] and weight is not None else None,
                    torch.zeros_like(bias) if mask[2] and bias is not None else None)
        n = math.prod(normalized_shape)
        rows = input.numel() // n
        if tuple(input.shape) == (rows, n):
            return fn(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
        grad_input, grad_weight, grad_bias = fn(grad_out.reshape(rows, n), input.reshape(rows, n),
                                                normalized_shape, mean, rstd, weight, bias, output_mask)
        return (None if grad_input is None else grad_input.view(input.shape)), grad_weight, grad_bias

    return in_rows


# FlagGems' Hopper functions (runtime/backend/_nvidia/hopper/ops, which
# replace the generic ones on compute capability 9, the H100/H200) run flat
# kernels: element i of every operand is data_ptr + i, whatever its shape,
# strides or dtype. That is right only for operands of one dense layout and,
# for mul, one dtype. The wrappers below hand them such operands.


def _dense(t: torch.Tensor) -> bool:
    """Whether t's elements fill [data_ptr, data_ptr + numel) exactly once
    (contiguous, or a permutation of contiguous)."""
    if t.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def read_dense(fn: Callable) -> Callable:
    """A function reading its first argument flat: a non-dense one (a strided
    slice) is handed over contiguous."""

    @functools.wraps(fn)
    def dense_operand(a, *args, **kwargs):
        return fn(a if _dense(a) else a.contiguous(), *args, **kwargs)

    return dense_operand


def read_contiguous(fn: Callable) -> Callable:
    """A function reading its first argument flat in row-major order (element
    i is the i-th in logical order): it gets it contiguous."""

    @functools.wraps(fn)
    def contiguous_operand(a, *args, **kwargs):
        return fn(a.contiguous(), *args, **kwargs)

    return contiguous_operand


def write_dense(fn: Callable, out: str | None = None, contiguous: bool = False) -> Callable:
    """A function writing a tensor flat, its first argument or keyword `out`:
    a non-dense one (`x[:, 0].fill_(1)`), or a non-contiguous one where the
    function writes in row-major order (`contiguous`), gets the function run
    on a contiguous copy, then that copy's values. Else the kernel writes
    numel elements from its first one, over elements that are not its."""

    @functools.wraps(fn)
    def dense_result(*args, **kwargs):
        target = kwargs.get(out) if out else args[0]
        if target is None or (target.is_contiguous() if contiguous else _dense(target)):
            return fn(*args, **kwargs)
        plain = target.contiguous()
        if out:
            fn(*args, **{**kwargs, out: plain})
        else:
            fn(plain, *args[1:], **kwargs)
        return target.copy_(plain)

    return dense_result


def mul_in_one_dtype(fn: Callable) -> Callable:
    """Hopper's mul of two real tensors of the same number of dimensions runs
    a flat kernel into a tensor like its first operand. Mixed layouts the
    core already hands over contiguous (core/routes/flaggems_operands.h).
    Mixed dtypes would give the first one's (bfloat16 * float32 giving
    bfloat16, bool * float giving bool), and a host operand beside a device
    one (`loss * torch.tensor(2.0)`: 0-dim both) would be read through a host
    pointer. Both go to the result dtype (reckoned before any move, as torch
    does) on the device. A Python number (`loss * 2.0`: the route hands
    torch's wrapped numbers over as numbers) takes FlagGems' scalar path."""

    @functools.wraps(fn)
    def one_dtype(a, b):
        # The common case first: two tensors of one dtype (dtypes are
        # singletons), not 0-dim (a host operand beside a device one is 0-dim,
        # as torch allows only such).
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return fn(a, b)
        if a.dtype is b.dtype and a.dim() > 0:
            return fn(a, b)
        if a.dim() != b.dim() or a.is_complex() or b.is_complex() or (a.dtype is b.dtype and a.is_cpu == b.is_cpu):
            return fn(a, b)
        dtype = torch.result_type(a, b)
        device = b.device if a.is_cpu else a.device
        return fn(a.to(device, dtype), b.to(device, dtype))

    return one_dtype


# op -> the wrapper its FlagGems function gets, whatever FlagGems' version
# and GPU. Besides layer_norm's rows, FlagGems 5.0.2's generic zero_,
# slice_backward and hardsigmoid run flat kernels too.
FIXES: dict[str, Callable[[Callable], Callable]] = {
    "native_layer_norm_backward": layer_norm_backward_in_rows,
    "zero_": write_dense,
    "slice_backward": read_contiguous,  # its gradient read in row-major order
    "hardsigmoid": read_dense,
    "hardsigmoid.out": lambda fn: write_dense(read_contiguous(fn), out="out", contiguous=True),
}

# op -> the wrapper its FlagGems function gets when it is a Hopper one.
HOPPER_FIXES: dict[str, Callable[[Callable], Callable]] = {
    "mul.Tensor": mul_in_one_dtype,
    "sqrt": read_dense,
    "sqrt_": write_dense,
    "fill_.Scalar": write_dense,
    "fill_.Tensor": write_dense,
    "fill.Scalar_out": functools.partial(write_dense, out="out"),
    "fill.Tensor_out": functools.partial(write_dense, out="out"),
}


def _is_hopper(fn: Callable) -> bool:
    # FlagGems imports its arch folder as a top-level package ("hopper.ops.mul").
    return "hopper" in getattr(fn, "__module__", "").split(".")


def fixed(op: str, fn: Callable) -> Callable:
    """FlagGems' function for `op`, wrapped where a table above names a bug of it."""
    fix = FIXES.get(op) or (HOPPER_FIXES.get(op) if _is_hopper(fn) else None)
    return fix(fn) if fix else fn
