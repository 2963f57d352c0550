"""torch.distributed on flagos (docs/distributed.md): two ranks on this
machine, each a fresh process (test/distributed/launch.py), on each tier the
host plugin offers: its communicator (the collectives extension, shared
memory between the processes), and with `collectives=0` the gloo tiers:
zero-copy (its default memory is host-addressable) and staged (strict=1:
device memory is PROT_NONE to all but the plugin)."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT, _clean_env, run_python

sys.path.insert(0, str(ROOT / "test" / "distributed"))
import launch  # noqa: E402
import sim_runtimes  # noqa: E402

TIERS = {
    "communicator": {},
    "communicator strict": {"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "strict=1"},
    "gloo-zero-copy": {"FLAGOS_PLUGIN_OPTIONS": "collectives=0"},
    "gloo-staged": {"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "strict=1,collectives=0"},
}


def tier_name(case: str) -> str:
    return case.split()[0]


def run_ranks(script: str, args: list[str], env: dict[str, str], timeout: float = 120.0):
    ranks = launch.launch(script, args, _clean_env(env), timeout=timeout)
    assert all(r.returncode == 0 for r in ranks), launch.describe(ranks)
    return ranks


@pytest.mark.parametrize("case", TIERS)
def test_every_collective_matches_gloo_on_cpu(case):
    tier = tier_name(case)
    ranks = run_ranks("collectives.py", [tier], TIERS[case])
    for r in ranks:
        assert "ok all_to_all_single uneven" in r.stdout and "ok all_reduce AVG" in r.stdout
    # One info line per group (from its rank 0): the world and the reference group.
    assert ranks[0].stderr.count(f"runs on tier {tier}") == 2, ranks[0].stderr
    staged_warnings = ranks[0].stderr.count("FLAGOS_DIST_STAGED_GLOO=0 makes this an error")
    assert staged_warnings == (1 if tier == "gloo-staged" else 0), ranks[0].stderr


# The whole training set on the default tier and on the staged one; DDP alone
# on the other two (their collectives are checked bit for bit above).
TRAINING = {"communicator": ["ddp", "fsdp", "dcp"], "gloo-staged": ["ddp", "fsdp", "dcp"],
            "communicator strict": ["ddp"], "gloo-zero-copy": ["ddp"]}


@pytest.mark.parametrize("case", TRAINING)
def test_ddp_fsdp2_and_checkpoint_match_one_process_training(case):
    ranks = run_ranks("training.py", TRAINING[case], TIERS[case], timeout=240)
    expected = {"ddp": "ok ddp step 2", "fsdp": "ok fsdp step 2", "dcp": "ok dcp after load step 3"}
    for r in ranks:
        for check in TRAINING[case]:
            assert expected[check] in r.stdout, r.stdout


def test_staged_tier_on_a_cuda_shaped_plugin(simrt):
    """The metax plugin on its simulated runtime, guard pages on: every
    operand goes through the plugin's real device<->host copies."""
    env = sim_runtimes.environment(simrt, "metax", SIMRT_GUARD="1")
    ranks = run_ranks("collectives.py", ["gloo-staged"], {k: v for k, v in env.items() if k.startswith(
        ("FLAGOS_", "SIMRT_")) or k in sim_runtimes.SDK_VARS})
    assert "runs on tier gloo-staged (metax plugin)" in ranks[0].stderr, ranks[0].stderr
    # The plugin has the collectives extension but no MCCL here: rank 0 says
    # so once, and both ranks took the gloo tier (the tier check above).
    said = "[flagos] distributed: the metax plugin's communicator is unavailable, so its groups use the gloo tiers"
    assert ranks[0].stderr.count(said) == 1 and "no libmccl.so found" in ranks[0].stderr, ranks[0].stderr
    assert said not in ranks[1].stderr, ranks[1].stderr


def test_gloo_request_is_answered_by_the_flagos_backend():
    ranks = run_ranks("scenarios.py", ["redirect"], {})
    assert "ok new_group(backend='gloo') serves flagos tensors" in ranks[0].stdout


def test_redirect_off_keeps_plain_gloo():
    ranks = run_ranks("scenarios.py", ["redirect-off"], {"FLAGOS_DIST_REDIRECT_GLOO": "0"})
    assert "No backend type associated with device type flagos" in ranks[0].stdout


def test_device_mesh_and_default_backend():
    ranks = run_ranks("scenarios.py", ["mesh"], {})
    assert "tier communicator" in ranks[0].stdout


@pytest.mark.parametrize("case", ["communicator", "gloo-zero-copy"])
def test_no_backend_serves_both_device_types_and_ddp(case):
    ranks = run_ranks("scenarios.py", ["default"], TIERS[case])
    assert f"ok no backend: flagos and cpu tensors, DDP, tier {case}" in ranks[0].stdout, ranks[0].stdout


@pytest.mark.parametrize("case", ["communicator", "gloo-zero-copy"])
@pytest.mark.parametrize("scenario", ["dead-peer", "silent-peer"])
def test_lost_peer_fails_the_collective_instead_of_hanging(scenario, case):
    ranks = run_ranks("scenarios.py", [scenario], TIERS[case], timeout=60)
    assert ranks[0].stdout.startswith("ok "), ranks[0].stdout


def test_staged_tier_refused_when_disallowed():
    proc = run_python("""
        import torch, torch_fl, torch.distributed as dist
        try:
            dist.init_process_group("flagos", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
        except RuntimeError as e:
            print("REFUSED", e)
        else:
            print("BUILT", torch_fl.distributed.tier())
    """, env={"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "strict=1,collectives=0",
              "FLAGOS_DIST_STAGED_GLOO": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "REFUSED [flagos] distributed:" in proc.stdout and "FLAGOS_DIST_STAGED_GLOO=0" in proc.stdout, proc.stdout


def test_tier_of_a_group_the_backend_does_not_serve():
    proc = run_python("""
        import torch, torch_fl, torch.distributed as dist
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
        try:
            torch_fl.distributed.tier(dist.new_group(backend="cpu:gloo"))
        except ValueError as e:
            print(e)
    """, env={})
    assert "is not served by the flagos backend" in proc.stdout, proc.stdout + proc.stderr
