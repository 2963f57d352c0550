"""The model zoo (tools/model_zoo.py) trains one step on flagos exactly as on
native CUDA, eager (every model) and compiled (the six the benchmark times:
BERT, T5, Llama, Mixtral, ViT, ResNet): the same loss and every parameter's
gradient, fp32 with TF32 off on both sides. The native side runs
in a child process that does not import torch_fl (this file run as a
script), a reference nothing torch_fl installs can touch."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # the repo root
from tools import model_zoo  # noqa: E402

pytestmark = pytest.mark.gpu
pytest.importorskip("transformers")


def step_in_child(name: str, device: str = "cuda", compiled: bool = False):
    """model_zoo.step in a fresh interpreter (this file as a script): native
    CUDA without torch_fl, or flagos; compiled with torch.compile if asked."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "step.pt")
        env = {**os.environ}
        if device != "flagos":
            env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # keep torch_fl out of the native side
        cmd = [sys.executable, __file__, "--model", name, "--device", device, "--out", out]
        done = subprocess.run(cmd + (["--compiled"] if compiled else []), capture_output=True, text=True,
                              timeout=600, env=env)
        assert done.returncode == 0, f"{name} on {device} failed:\n{done.stderr[-4000:]}"
        return torch.load(out)


@pytest.mark.parametrize("name", sorted(model_zoo.MODELS))
def test_a_training_step_matches_native_cuda(name, full_fp32):
    model, inputs = model_zoo.build(name)
    model_zoo.assert_same_step(model_zoo.step(model, inputs, "flagos"), step_in_child(name))


@pytest.mark.parametrize("name", sorted(f.__name__ for f in model_zoo.TIMED))
def test_a_compiled_training_step_matches_native_cuda(name):
    """torch.compile on flagos (Inductor's Triton codegen on the flagos
    stream) against native CUDA's eager step, each model compiled in a fresh
    process, so that no compile reuses another's cached decisions."""
    model_zoo.assert_same_step(step_in_child(name, "flagos", compiled=True), step_in_child(name),
                               rtol=1e-3)  # Inductor fuses and reorders reductions


def _child_main() -> None:
    parser = argparse.ArgumentParser(description="one side of these tests, in its own process")
    parser.add_argument("--model", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--compiled", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.device == "flagos":
        import torch_fl  # noqa: F401
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    model, inputs = model_zoo.build(args.model)
    torch.save(model_zoo.step(model, inputs, args.device, compiled=args.compiled), args.out)


if __name__ == "__main__":
    _child_main()
