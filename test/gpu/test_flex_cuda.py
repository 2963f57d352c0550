"""flex_attention compiled on flagos over the cuda plugin: Inductor's fused
flex template (a Triton template kernel) on the flagos current stream,
forward and backward, against the CPU reference and native compiled CUDA
(docs/compile.md, "Flex attention")."""

from __future__ import annotations

import pytest
import torch
from torch._inductor.utils import run_and_get_code
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from tools.bench.flex import causal, relative_bias

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("fresh_dynamo")]

B, H, S, D = 2, 4, 256, 64


def _inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(B, H, S, D, generator=g) for _ in range(3)], torch.randn(B, H, S, D, generator=g)


def _compiled(device: str, qkv, grad_out):
    """Output and q/k/v gradients of compiled flex attention on `device`,
    and the generated code (forward and backward graphs)."""
    leaves = [t.to(device).requires_grad_() for t in qkv]
    mask = create_block_mask(causal, B, H, S, S, device=device)
    fn = torch.compile(flex_attention)

    def step():
        out = fn(*leaves, score_mod=relative_bias, block_mask=mask)
        out.backward(grad_out.to(device))
        return out

    out, code = run_and_get_code(step)
    return out.detach().cpu(), [t.grad.cpu() for t in leaves], code


def _cpu_reference(qkv, grad_out):
    """The CPU's eager flex forward, and the gradients of the same attention
    written out densely (the CPU has no flex backward)."""
    mask = create_block_mask(causal, B, H, S, S, device="cpu")
    with torch.no_grad():
        out = flex_attention(*qkv, score_mod=relative_bias, block_mask=mask)
    q, k, v = (t.double().requires_grad_() for t in qkv)
    scores = q @ k.transpose(-1, -2) / D ** 0.5
    idx = torch.arange(S)
    scores = scores + (idx[:, None] - idx[None, :]) * 0.01
    scores = scores.masked_fill(idx[:, None] < idx[None, :], float("-inf"))
    (scores.softmax(-1) @ v).backward(grad_out.double())
    return out, [t.grad.float() for t in (q, k, v)]


def test_compiled_flex_attention_takes_the_fused_template_and_matches_the_cpu(full_fp32):
    qkv, grad_out = _inputs()
    ref_out, ref_grads = _cpu_reference(qkv, grad_out)
    results = {dev: _compiled(dev, qkv, grad_out) for dev in ("cuda", "flagos")}
    for dev, (out, grads, code) in results.items():
        # The fused template, not the decomposed eager graph: Inductor names
        # template kernels triton_tem_*; forward and backward each have one.
        assert sum("triton_tem_" in c for c in code) >= 2, (dev, [c[:200] for c in code])
        torch.testing.assert_close(out, ref_out, rtol=1e-4, atol=1e-4, msg=lambda m: f"{dev} forward: {m}")
        for name, g, r in zip("qkv", grads, ref_grads):
            torch.testing.assert_close(g, r, rtol=1e-3, atol=1e-3, msg=lambda m: f"{dev} d{name}: {m}")
    # Same kernels on one GPU: flagos agrees with native compiled CUDA closely.
    torch.testing.assert_close(results["flagos"][0], results["cuda"][0], rtol=1e-5, atol=1e-5)
