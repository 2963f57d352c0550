"""flex_attention on flagos through the device-gate shim (torch_fl.compat,
FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT): the eager path, its backward, and the
fused path through torch.compile, against the CPU reference."""

from __future__ import annotations

import pytest
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import torch_fl
from conftest import run_python

B, H, S, D = 2, 4, 64, 16


# The mask and score mod of tools/bench/flex.py, whose package sets
# FLAGOS_ALIAS_CUDA for its benchmarks when imported: not imported here.
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def relative_bias(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx) * 0.01


@pytest.fixture
def qkv():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(B, H, S, D, generator=g) for _ in range(3)]


def reference(q, k, v):
    return flex_attention(q, k, v, score_mod=relative_bias,
                          block_mask=create_block_mask(causal, B, H, S, S, device="cpu"))


def test_eager_flex_attention_matches_the_cpu_reference(qkv):
    mask = create_block_mask(causal, B, H, S, S, device="flagos")
    out = flex_attention(*(t.to("flagos") for t in qkv), score_mod=relative_bias, block_mask=mask)
    assert out.device.type == "flagos"
    torch.testing.assert_close(out.cpu(), reference(*qkv), rtol=1e-5, atol=1e-6)


def test_eager_flex_attention_backward_matches_sdpa_on_the_cpu(qkv):
    # Without mods flex attention is plain attention; the CPU has no flex backward.
    ours = [t.to("flagos").requires_grad_() for t in qkv]
    flex_attention(*ours).square().sum().backward()
    ref = [t.clone().requires_grad_() for t in qkv]
    torch.nn.functional.scaled_dot_product_attention(*ref).square().sum().backward()
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a.grad.cpu(), b.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(torch_fl.compile.codegen(0) is None, reason="no Inductor codegen for this plugin")
def test_compiled_flex_attention_matches_the_cpu_reference(qkv):
    torch._dynamo.reset()
    mask = create_block_mask(causal, B, H, S, S, device="flagos")
    with torch.no_grad():
        out = torch.compile(flex_attention)(*(t.to("flagos") for t in qkv), score_mod=relative_bias, block_mask=mask)
    torch.testing.assert_close(out.cpu(), reference(*qkv), rtol=1e-4, atol=1e-5)


def test_disabling_the_shim_restores_upstreams_gate():
    code = """
        import torch, torch_fl
        from torch.nn.attention.flex_attention import flex_attention
        q = torch.randn(1, 1, 8, 8, device="flagos")
        try:
            flex_attention(q, q, q)
            print("accepted")
        except ValueError as e:
            print("refused:", e)
    """
    assert run_python(code, check=True).stdout.startswith("accepted")
    refused = run_python(code, env={"FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT": "1"}, check=True).stdout
    assert refused.startswith("refused:") and "flagos device" in refused, refused
