"""Measuring a plugin's native operators before a conf lists them
(`python -m tools.routing_conf measure`, FLAGOS_EXEC_CACHE) and the generator
listing those that passed (`generate --measured`). Measured here on the
simulated CANN runtime: simulated-runtime results, not hardware results."""

from __future__ import annotations

import json
import sys
import tomllib

from conftest import ROOT, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import environment  # noqa: E402


def measure(simrt, tmp_path, ops: str, **extra: str):
    env = environment(simrt, "ascend", PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path / "cache"), **extra)
    out = tmp_path / "ascend_native.json"
    proc = run_python("", args=["-m", "tools.routing_conf", "measure", "--ops", ops, "--out", str(out)], env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [l for l in proc.stdout.splitlines() if not l.startswith(str(out))]
    return json.loads(out.read_text()), lines


def test_measured_results_are_cached_until_exec_cache_is_off(simrt, tmp_path):
    record, lines = measure(simrt, tmp_path, "mm,mul_.Tensor")
    assert record["plugin"] == "ascend" and set(record["results"]) == {"mm", "mul_.Tensor"}
    assert all(v.startswith("pass") for v in record["results"].values()), record
    assert not any("(cached)" in l for l in lines), lines
    _, again = measure(simrt, tmp_path, "mm,mul_.Tensor")
    assert again == [l + " (cached)" for l in lines]  # nothing executed: the same verdicts
    _, forced = measure(simrt, tmp_path, "mm", FLAGOS_EXEC_CACHE="0")
    assert forced == [lines[0]]  # executed again


def test_an_operator_that_fails_on_the_device_is_recorded_as_failing(simrt, tmp_path):
    # Every aclnnMm launch fails in the simulated runtime: mm's verdict says so.
    record, _ = measure(simrt, tmp_path, "mm", SIMRT_FAIL="aclnnMm", FLAGOS_EXEC_CACHE="0")
    assert record["results"]["mm"].startswith("fail: RuntimeError: [flagos] plugin 'ascend'"), record


def test_generate_lists_measured_passing_operators_on_native(tmp_path):
    measured = tmp_path / "measured"
    measured.mkdir()
    (measured / "ascend_native.json").write_text(json.dumps({
        "platform": "ascend", "plugin": "ascend", "torch": "2.13.0", "device": "Ascend (sim)",
        "results": {"add.out": "pass (22 samples)", "mm": "pass (9 samples)", "exp_": "fail: AssertionError: x"}}))
    out = tmp_path / "confs"
    proc = run_python("", env={"FLAGOS_PLUGIN": "host", "PYTHONPATH": str(ROOT)},
                      args=["-m", "tools.routing_conf", "generate", "--out", str(out), "--only", "ascend.toml",
                            "--measured", str(measured)])
    assert proc.returncode == 0, proc.stderr
    text = (out / "ascend.toml").read_text()
    routes = tomllib.loads(text)["routes"]
    assert routes["add.out"] == "native"     # measured passing, listed by nothing else
    assert routes["mm"] == "flaggems"        # FlagGems' route stays; native serves it when FlagGems cannot
    assert routes["exp_"] == "flaggems"      # a failing measurement adds nothing
    assert "# native: 2 of 3 measured operators pass (ascend_native.json: Ascend (sim), torch 2.13.0)" in text
