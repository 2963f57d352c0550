"""The "flagos" distributed backend on the cuda plugin (docs/distributed.md):
its memory is not host-addressable, so groups run on the gloo-staged tier.
One rank on the GPU, then two ranks sharing it: every collective against
gloo on CPU tensors, and DDP, FSDP2 and a distributed checkpoint against
one-process training on the CPU."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "distributed"))
import launch  # noqa: E402

pytestmark = pytest.mark.gpu
ENV = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_")}
ENV["FLAGOS_PLUGIN"] = "cuda"


def run_ranks(script, args, world_size, **extra):
    ranks = launch.launch(script, args, dict(ENV, **extra), world_size=world_size, timeout=240)
    assert all(r.returncode == 0 for r in ranks), launch.describe(ranks)
    return ranks


@pytest.mark.parametrize("world_size", [1, 2])
def test_every_collective_matches_gloo(world_size):
    ranks = run_ranks("collectives.py", ["gloo-staged"], world_size)
    assert "ok all_reduce AVG" in ranks[0].stdout
    assert "runs on tier gloo-staged (cuda plugin)" in ranks[0].stderr


def test_ddp_fsdp2_and_checkpoint_on_two_ranks_sharing_the_gpu():
    ranks = run_ranks("training.py", ["ddp", "fsdp", "dcp"], 2, TRAINING_RTOL="1e-4", TRAINING_ATOL="1e-5",
                      DCP_WRITER_THREADS="2")
    for line in ("ok ddp step 2", "ok fsdp step 2", "ok dcp after load step 3"):
        assert line in ranks[0].stdout, ranks[0].stdout
