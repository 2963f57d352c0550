"""torch.compile on flagos (host plugin, the cpp codegen path) under real
models: a training step of the model zoo's architectures (tools/model_zoo.py)
compiled on flagos gives the CPU's eager loss and gradients. Two of them
need the rewrites of python/torch_fl/compile/cpu_semantics.py: Mixtral
counts expert ids with an integer histc, and ResNet's backward views
tensors the CPU's convolution lays out channels-last."""

from __future__ import annotations

import sys

import pytest
import torch

import torch_fl  # noqa: F401
from conftest import ROOT, cpp_codegen_only

pytest.importorskip("transformers")
sys.path.insert(0, str(ROOT))
from tools import model_zoo  # noqa: E402

pytestmark = cpp_codegen_only()


@pytest.mark.parametrize("name", ["mixtral", "resnet"])
def test_a_compiled_training_step_matches_cpu_eager(name):
    model, inputs = model_zoo.build(name)
    model_zoo.assert_same_step(model_zoo.step(model, inputs, "flagos", compiled=True),
                               model_zoo.step(model, inputs, "cpu"), rtol=1e-3)  # Inductor reorders reductions


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_compiled_histc_counts_integers_as_eager_does(dtype):
    ids = torch.tensor([0, 3, 3, 1, 2, 3, 0, 7], dtype=dtype, device="flagos")
    got = torch.compile(lambda x: torch.histc(x, bins=4, min=0, max=3) * 2)(ids)
    assert got.dtype == dtype and got.cpu().tolist() == [4, 2, 2, 6]
