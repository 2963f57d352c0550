"""GPU tests: flagos on the cuda plugin against native CUDA
(test/gpu/run.sh runs them on a GPU host).

Tests marked `gpu` (the marker is declared in pyproject.toml) skip unless
torch sees CUDA and the active flagos plugin is cuda, so the two devices are
one GPU seen twice; unmarked tests compare flagos with the CPU and run on any
plugin, which keeps their logic exercised on the CPU machine.
"""

from __future__ import annotations

import os

# Native CUDA is the reference here: "cuda" must stay CUDA's (docs/compat.md).
os.environ.setdefault("FLAGOS_ALIAS_CUDA", "0")

import pytest  # noqa: E402
import torch  # noqa: E402

import torch_fl  # noqa: E402

PLUGIN = torch_fl.plugin_info()
ON_CUDA = torch.cuda.is_available() and PLUGIN["name"] == "cuda"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a real accelerator (skipped where none is present)")


def pytest_report_header(config):
    return (f"flagos plugin: {PLUGIN['name']} ({PLUGIN['device_count']} devices); "
            f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}")


def pytest_collection_modifyitems(config, items):
    if ON_CUDA:
        return
    skip = pytest.mark.skip(reason=f"needs CUDA and the cuda flagos plugin (CUDA available: "
                                   f"{torch.cuda.is_available()}, plugin: {PLUGIN['name']})")
    for item in items:
        # Not `"gpu" in item.keywords`: keywords hold parent names too, and
        # this directory is named gpu.
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture
def full_fp32():
    """fp32 matmuls and convolutions in full precision (no TF32) on CUDA,
    for both sides alike; the previous settings come back afterwards."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


@pytest.fixture
def fresh_dynamo():
    """Dynamo's caches emptied before and after a compile test, so that one
    test's compiled graphs and guards do not serve the next."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
