"""An unchanged CUDA training script (dropin_cuda_script.py: `import torch`
only, "cuda" everywhere, torch.cuda calls, fp16 autocast and a GradScaler)
runs on flagos: torch's backend autoload imports torch_fl, FLAGOS_ALIAS_CUDA
and the torch.cuda shim do the rest. Here against the same model trained on
the CPU; test/gpu/test_dropin_cuda.py compares it with native CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).with_name("dropin_cuda_script.py")


def _run(**env: str) -> subprocess.CompletedProcess:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_PLUGIN"}
    child_env.update(env)
    return subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=child_env, timeout=300)


def _cpu_reference() -> list[float]:
    """The script's model and data, fp32 on the CPU (no GradScaler: nothing overflows)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.LayerNorm(256),
                                torch.nn.Linear(256, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(128, 64, generator=g)
    y = torch.randint(0, 10, (128,), generator=g)
    losses = []
    for _ in range(8):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_cuda_script_runs_on_flagos_unchanged():
    got = _run()
    assert got.returncode == 0, got.stderr[-3000:]
    out = json.loads(got.stdout.strip().splitlines()[-1])
    assert out["device"] == "flagos:0" and out["accelerator"] == "flagos"
    assert out["restored"] and out["max_memory_allocated"] > 0
    assert out["scale"] == 65536.0  # no step skipped
    # fp16 autocast against fp32 on the CPU
    assert out["losses"] == pytest.approx(_cpu_reference(), rel=2e-2)


def test_without_autoload_and_alias_the_script_is_torchs_again():
    got = _run(TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    if torch.backends.cuda.is_built():
        pytest.skip("this torch has CUDA: the script would run natively")
    assert got.returncode != 0 and "this script needs a GPU" in got.stderr
