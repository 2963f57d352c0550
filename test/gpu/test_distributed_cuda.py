"""The "flagos" distributed backend on the cuda plugin (docs/distributed.md).
One rank runs on the communicator tier (the plugin's collectives extension
over the NCCL that torch's CUDA build brings); two ranks sharing the GPU run
there too where NCCL takes two ranks on one GPU (2.30 and later), else on
gloo-staged after one line saying why. Every collective is checked against
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
SHARED = "communicator,gloo-staged"  # two ranks on one GPU: as NCCL allows


def run_ranks(script, args, world_size, **extra):
    ranks = launch.launch(script, args, dict(ENV, **extra), world_size=world_size, timeout=240)
    assert all(r.returncode == 0 for r in ranks), launch.describe(ranks)
    return ranks


def test_nccl_is_what_the_plugin_finds():
    import torch
    print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))


@pytest.mark.parametrize("world_size", [1, 2])
def test_every_collective_matches_gloo(world_size):
    ranks = run_ranks("collectives.py", ["communicator" if world_size == 1 else SHARED], world_size)
    err = ranks[0].stderr
    assert "ok all_reduce AVG" in ranks[0].stdout
    for name in ("broadcast", "all_gather", "reduce_scatter", "all_reduce SUM torch.float32"):
        assert f"ok {name}\n" in ranks[0].stdout, ranks[0].stdout
    if world_size == 1 or "runs on tier communicator" in err:
        assert "runs on tier communicator (cuda plugin)" in err, err
    else:  # NCCL refused two ranks on one GPU: every rank fell back, rank 0 said why once
        assert err.count("plugin's communicator is unavailable") == 1, err
        assert "runs on tier gloo-staged (cuda plugin)" in err, err
    print(err[-600:])


def test_ddp_and_fsdp2_steps_on_the_communicator_with_one_rank():
    ranks = run_ranks("training.py", ["ddp", "fsdp"], 1, TRAINING_RTOL="1e-4", TRAINING_ATOL="1e-5")
    for line in ("ok ddp step 2", "ok fsdp step 2"):
        assert line in ranks[0].stdout, ranks[0].stdout
    assert "runs on tier communicator (cuda plugin)" in ranks[0].stderr, ranks[0].stderr


def test_ddp_fsdp2_and_checkpoint_on_two_ranks_sharing_the_gpu():
    ranks = run_ranks("training.py", ["ddp", "fsdp", "dcp"], 2, TRAINING_RTOL="1e-4", TRAINING_ATOL="1e-5",
                      DCP_WRITER_THREADS="2")
    for line in ("ok ddp step 2", "ok fsdp step 2", "ok dcp after load step 3"):
        assert line in ranks[0].stdout, ranks[0].stdout
