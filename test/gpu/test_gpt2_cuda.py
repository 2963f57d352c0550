"""A Hugging Face transformers GPT-2, built from a config with random weights
(nothing is downloaded), on flagos against a reference device: native CUDA on
the GPU machine (`gpu` tests), the CPU anywhere. Both sides get the same
weights (initialised once on the CPU, then copied) and the same tokens;
forward logits and loss, and every parameter's gradient, must agree: closely
in fp32 (TF32 off), loosely under bf16 autocast.
"""

from __future__ import annotations

import copy

import pytest
import torch

transformers = pytest.importorskip("transformers")

REFERENCES = [pytest.param("cpu", id="vs-cpu"), pytest.param("cuda", id="vs-cuda", marks=pytest.mark.gpu)]
SEED = 0


def _model() -> torch.nn.Module:
    cfg = transformers.GPT2Config(n_layer=3, n_embd=256, n_head=4, vocab_size=1000, n_positions=128,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  bos_token_id=0, eos_token_id=0)
    torch.manual_seed(SEED)
    return transformers.GPT2LMHeadModel(cfg)


def _on(model: torch.nn.Module, device: str) -> torch.nn.Module:
    """A copy on `device` with lm_head still tied to the token embedding
    (Module.to() unties them on flagos: see test_module_to_keeps_tied_weights)."""
    moved = copy.deepcopy(model).to(device)
    moved.tie_weights()
    return moved


def _run(model: torch.nn.Module, ids: torch.Tensor, autocast: bool):
    with torch.autocast(ids.device.type, dtype=torch.bfloat16, enabled=autocast):
        out = model(ids, labels=ids)
    out.loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    return out.logits.float().cpu(), out.loss.detach().float().cpu(), grads


def _both(reference: str, autocast: bool):
    base = _model()
    ids = torch.randint(0, base.config.vocab_size, (2, 64), generator=torch.Generator().manual_seed(SEED))
    ref = _run(_on(base, reference), ids.to(reference), autocast)
    flagos = _run(_on(base, "flagos"), ids.to("flagos"), autocast)
    assert flagos[2].keys() == ref[2].keys()
    assert all(g is not None and g.device.type == "flagos" for g in flagos[2].values())
    return ref, flagos


@pytest.mark.parametrize("reference", REFERENCES)
def test_fp32_forward_and_backward_match(reference, full_fp32):
    (logits, loss, grads), (fl_logits, fl_loss, fl_grads) = _both(reference, autocast=False)
    torch.testing.assert_close(fl_logits, logits, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(fl_loss, loss, rtol=1e-4, atol=1e-4)
    for name, g in grads.items():
        g = g.cpu()
        # Gradients span orders of magnitude across parameters: tolerance
        # relative to each tensor's largest entry.
        torch.testing.assert_close(fl_grads[name].cpu(), g, rtol=1e-4, atol=1e-4 * g.abs().max().item(),
                                   msg=lambda m, name=name: f"gradient of {name}: {m}")


@pytest.mark.parametrize("reference", REFERENCES)
def test_bf16_autocast_forward_and_backward_match(reference):
    (logits, loss, grads), (fl_logits, fl_loss, fl_grads) = _both(reference, autocast=True)
    # bf16 keeps 8 bits of mantissa: compare at the scale of the values.
    torch.testing.assert_close(fl_loss, loss, rtol=1e-2, atol=1e-2)
    assert (fl_logits - logits).abs().max() <= 5e-2 * logits.abs().max()
    for name, g in grads.items():
        g, fl = g.float().cpu(), fl_grads[name].float().cpu()
        assert fl.dtype == torch.float32, name  # autocast leaves parameters (and grads) in fp32
        error = (fl - g).norm() / g.norm().clamp_min(1e-12)
        assert error < 5e-2, f"gradient of {name}: relative error {error:.3g}"


def test_module_to_keeps_tied_weights():
    # torch alone would untie them (PrivateUse1 is not "shallow-copy
    # compatible" with CPU); torch_fl._compat restores the ties.
    model = _model().to("flagos")
    assert model.lm_head.weight is model.transformer.wte.weight
