"""Compiled flex attention (Inductor's fused flex template) as a workload for
tools/bench/timing.py: a causal block mask with a relative-position score_mod,
forward alone or forward and backward, compiled once per device before timing."""

from __future__ import annotations

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

FULL = (4, 16, 2048, 64)  # batch, heads, sequence, head dim
DRY = (1, 2, 128, 16)


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def relative_bias(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx) * 0.01


def describe(shape: tuple[int, int, int, int], dtype: torch.dtype, backward: bool) -> str:
    b, h, s, d = shape
    what = "forward and backward" if backward else "forward"
    return (f"flex_attention compiled, causal block mask + relative bias, {what}, "
            f"B={b} H={h} S={s} D={d} {str(dtype).replace('torch.', '')}")


def workload(shape: tuple[int, int, int, int], dtype: torch.dtype, backward: bool, calls: int):
    """timing.Workload: `calls` attention calls per block on a device."""
    b, h, s, d = shape

    def make(device: str):
        g = torch.Generator().manual_seed(0)
        q, k, v, grad = (torch.randn(b, h, s, d, generator=g).to(device, dtype) for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(backward)
        mask = create_block_mask(causal, None, None, s, s, device=device)
        fn = torch.compile(flex_attention)

        def run():
            for _ in range(calls):
                if backward:
                    fn(q, k, v, score_mod=relative_bias, block_mask=mask).backward(grad)
                else:
                    with torch.no_grad():
                        fn(q, k, v, score_mod=relative_bias, block_mask=mask)

        run()  # compiles
        return run, calls

    return make
