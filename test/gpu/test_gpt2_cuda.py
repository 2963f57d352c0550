"""A Hugging Face transformers GPT-2, built from a config with random weights
(nothing is downloaded), on flagos against a reference device: native CUDA on
a GPU host (`gpu` tests), the CPU anywhere. Both sides get the same
weights (initialised once on the CPU from one seed, then copied) and the same
tokens; forward logits and loss, and every parameter's gradient, must agree:
closely in fp32 (TF32 off), loosely under bf16 autocast.

The native CUDA side runs in a child process that does not import torch_fl
(this file run as a script), a reference nothing torch_fl installs can touch.
"""

from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
import tempfile

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
    """(logits, loss, gradients). `loss` holds two values: the loss after the
    forward, and what the same tensor holds after the backward (a kernel
    writing into memory it does not own shows there: FlagGems 5.0.2 did)."""
    with torch.autocast(ids.device.type, dtype=torch.bfloat16, enabled=autocast):
        out = model(ids, labels=ids)
    loss = out.loss.detach().float().cpu()
    out.loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    return out.logits.float().cpu(), torch.stack([loss, out.loss.detach().float().cpu()]), grads


def _ids(model: torch.nn.Module) -> torch.Tensor:
    return torch.randint(0, model.config.vocab_size, (2, 64), generator=torch.Generator().manual_seed(SEED))


def run_in_child(device: str, autocast: bool, timeout: float = 600, **env: str):
    """_run on `device` in a fresh interpreter (this file as a script, which
    imports torch_fl only for flagos), under this process's environment less
    its FLAGOS_OP_<op> and FLAGOS_FORCE_BACKEND, plus `env`. Returns _run's
    results, come back through a file, on the CPU, and the child's stderr
    (test_flaggems_route.py runs the flagos side under cuda_flaggems.toml)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGOS_OP_", "FLAGOS_FORCE_BACKEND"))}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.pt")
        cmd = [sys.executable, __file__, "--device", device, "--out", out,
               "--tf32", str(int(torch.backends.cuda.matmul.allow_tf32))] + (["--autocast"] if autocast else [])
        # torch's backend autoload would import torch_fl into the native side.
        autoload = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"} if device != "flagos" else {}
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env={**full_env, **autoload, **env})
        assert done.returncode == 0, f"GPT-2 on {device} failed:\n{done.stderr[-4000:]}"
        return torch.load(out), done.stderr


def _both(reference: str, autocast: bool):
    base = _model()
    ids = _ids(base)
    if reference == "cpu":
        ref = _run(_on(base, reference), ids.to(reference), autocast)
    else:
        ref, _ = run_in_child(reference, autocast)
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


def _child_main() -> None:
    parser = argparse.ArgumentParser(description="one side of these tests in its own process")
    parser.add_argument("--device", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tf32", type=int, default=0)
    parser.add_argument("--autocast", action="store_true")
    args = parser.parse_args()
    if args.device == "flagos":  # with the conf its environment names (test_flaggems_route.py)
        import torch_fl  # noqa: F401
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = bool(args.tf32)
    base = _model()
    logits, loss, grads = _run(_on(base, args.device), _ids(base).to(args.device), args.autocast)
    torch.save((logits, loss, {n: g.cpu() for n, g in grads.items()}), args.out)


if __name__ == "__main__":
    _child_main()
