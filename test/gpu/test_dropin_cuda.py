"""An unchanged CUDA training script (test/python/dropin_cuda_script.py)
on flagos against itself on native CUDA: the same script, once with torch_fl
autoloaded and FLAGOS_ALIAS_CUDA=1 (it runs on flagos), once with autoload
off (torch's own CUDA). The losses agree; the device each ran on differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

SCRIPT = Path(__file__).parents[1] / "python" / "dropin_cuda_script.py"


def _run(**env: str) -> dict:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_ALIAS")}
    child_env.update(env)
    got = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=child_env, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    return json.loads(got.stdout.strip().splitlines()[-1])


def test_cuda_script_on_flagos_matches_native_cuda():
    on_flagos = _run(FLAGOS_ALIAS_CUDA="1")
    native = _run(TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert on_flagos["device"] == "flagos:0" and native["device"] == "cuda:0"
    assert on_flagos["device_name"] == native["device_name"]  # the same GPU, seen through flagos
    assert on_flagos["restored"] and native["restored"]
    assert on_flagos["scale"] == native["scale"]
    assert on_flagos["losses"] == pytest.approx(native["losses"], rel=5e-3)
