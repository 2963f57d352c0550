"""The flagcx tier of the "flagos" backend (docs/distributed.md, "FlagCX"):
two ranks on the host plugin, with a stand-in for FlagCX's torch plugin
(test/distributed/flagcx_standin: the real one's package name, import order
and self-registration with torch.distributed; its backend is gloo over host
copies) on PYTHONPATH."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT, _clean_env

sys.path.insert(0, str(ROOT / "test" / "distributed"))
import launch  # noqa: E402

STANDIN = str(ROOT / "test" / "distributed" / "flagcx_standin")
UNAVAILABLE = "[flagos] distributed: FlagCX's torch plugin is unavailable, so flagos groups use the next tier"


def run_ranks(expected_tier: str, env: dict[str, str]):
    ranks = launch.launch("flagcx_tier.py", [expected_tier], _clean_env(env), timeout=90, path=(STANDIN,))
    assert all(r.returncode == 0 for r in ranks), launch.describe(ranks)
    for r in ranks:
        assert "flagcx imported by import torch_fl: False" in r.stdout, r.stdout
        assert "ok all_to_all_single uneven" in r.stdout and "ok barrier" in r.stdout, r.stdout
    return ranks


@pytest.mark.parametrize("api, exported", [("plain", None), ("extended", "vendor")])
def test_flagcx_serves_flagos_tensors_when_its_plugin_is_installed(api, exported):
    env = {"FLAGCX_STANDIN_API": api}
    if exported is not None:
        # TORCH_DEVICE_BACKEND_AUTOLOAD: FlagCX's import pops it; torch_fl puts it back.
        env.update(FLAGCX_TORCH_BACKEND=exported, TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    ranks = run_ranks("flagcx", env)
    selector = exported or "flagos"  # set before the import where unset; an export wins
    for r in ranks:
        assert f"FLAGCX_TORCH_BACKEND at import flagcx={selector}" in r.stdout, r.stdout
        assert "ok flagos tensors reach the flagcx backend" in r.stdout and "ok CPU tensors reach gloo" in r.stdout
        assert "flagcx backends created: 1" in r.stdout, r.stdout
        if exported is not None:
            assert "TORCH_DEVICE_BACKEND_AUTOLOAD=1" in r.stdout, r.stdout
        # The extended creator gets FlagCX's own default options.
        assert ("flagcx options: ['ProcessGroupFlagCX.Options']" if api == "extended"
                else "flagcx options: []") in r.stdout, r.stdout
    said = f"runs on tier flagcx (FLAGCX_TORCH_BACKEND={selector}, host plugin)"
    assert ranks[0].stderr.count(said) == 1, ranks[0].stderr
    assert UNAVAILABLE not in ranks[0].stderr


def test_force_nccl_skips_flagcx():
    ranks = run_ranks("communicator", {"FLAGOS_DIST_FORCE_NCCL": "1"})
    for r in ranks:
        assert "flagcx imported: False" in r.stdout and "FLAGCX_TORCH_BACKEND=None" in r.stdout, r.stdout
    assert "runs on tier communicator (host plugin)" in ranks[0].stderr, ranks[0].stderr


def test_flagcx_that_fails_falls_back_with_one_line():
    ranks = run_ranks("communicator", {"FLAGCX_STANDIN_FAIL": "1"})
    assert ranks[0].stderr.count(UNAVAILABLE) == 1, ranks[0].stderr
    assert "flagcx stand-in: no device communicator" in ranks[0].stderr, ranks[0].stderr
    assert UNAVAILABLE not in ranks[1].stderr, ranks[1].stderr
    assert "runs on tier communicator (host plugin)" in ranks[0].stderr, ranks[0].stderr
