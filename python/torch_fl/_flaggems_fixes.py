"""Wrappers around FlagGems functions that are wrong for arguments torch hands
them, applied as _flaggems.py registers them for the flaggems route. Each
names its bug and stays right on a FlagGems that has fixed it, so none is
tied to a version. (Operand layouts FlagGems misreads are the core's
business: core/routes/flaggems_operands.h.)
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
    tensors (FlagGems #5392, PR #5474). On the H200 a GPT-2 backward under
    cuda_flaggems.toml overwrote its own loss (session 13).
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


# op -> the wrapper its FlagGems function gets.
FIXES: dict[str, Callable[[Callable], Callable]] = {
    "native_layer_norm_backward": layer_norm_backward_in_rows,
}


def fixed(op: str, fn: Callable) -> Callable:
    """FlagGems' function for `op`, wrapped where FIXES names a bug of it."""
    fix = FIXES.get(op)
    return fix(fn) if fix else fn
