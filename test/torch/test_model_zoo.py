"""Six Hugging Face architectures (tools/model_zoo.py) train one step on
flagos exactly as on the CPU: the same loss and every parameter's gradient,
from the same weights and inputs. On the host plugin and every simulated
vendor runtime (CI) this checks the device's dispatch, routing, views, copies
and CPU fallback under real models, and greedy generation with the KV cache
gives the CPU's tokens; the GPU twin compares against native CUDA
(test/gpu/test_model_zoo_cuda.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
from tools import model_zoo  # noqa: E402


@pytest.mark.parametrize("name", sorted(model_zoo.MODELS))
def test_a_training_step_matches_the_cpu(name):
    import torch_fl  # noqa: F401

    model, inputs = model_zoo.build(name)
    model_zoo.assert_same_step(model_zoo.step(model, inputs, "flagos"), model_zoo.step(model, inputs, "cpu"))


@pytest.mark.parametrize("name", ["llama", "mixtral", "t5"])
def test_greedy_generation_matches_the_cpu(name):
    """generate() with the KV cache: the cache's writes and reads, and the
    decoding loop's host syncs, give the CPU's tokens."""
    import copy

    import torch

    import torch_fl  # noqa: F401

    model, inputs = model_zoo.build(name)
    prompt = inputs["input_ids"][:, :8]
    tokens = {}
    for device in ("cpu", "flagos"):
        on = copy.deepcopy(model).eval().to(device)
        with torch.no_grad():
            tokens[device] = on.generate(prompt.to(device), max_new_tokens=12, do_sample=False,
                                         pad_token_id=0).cpu()
    assert torch.equal(tokens["flagos"], tokens["cpu"])
