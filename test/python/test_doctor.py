"""`python -m torch_fl doctor`: the report of what is installed and what the
process would do, and its exit status (1 when a finding is an error)."""

from __future__ import annotations

import json

from conftest import run_python

SECTIONS = {"versions", "plugins", "companions", "routing", "environment", "compile", "distributed", "findings"}


def doctor(env: dict[str, str] | None = None, *extra: str):
    return run_python("", env=env, args=["-m", "torch_fl", "doctor", *extra])


def doctor_json(env: dict[str, str] | None = None) -> tuple[dict, int]:
    proc = doctor(env, "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout), proc.returncode


def test_names_the_explicit_host_plugin_and_why():
    proc = doctor({"FLAGOS_PLUGIN": "host"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("active") and "host (explicit" in line for line in lines), proc.stdout
    assert any(line.startswith("selected") and "FLAGOS_PLUGIN=host" in line for line in lines), proc.stdout
    assert "findings      none" in lines
    # The host plugin's reference kernels, none of which keeps an operator cache.
    assert "native        9: abs.out, add.out, copy.out, fill.Scalar_out, mm.out, mul.out, neg.out, relu.out, " \
        "sum.IntList_out" in lines, proc.stdout


def test_the_automatic_choice_and_its_reason_are_the_imports():
    imported = run_python("import json, torch_fl; print(json.dumps(torch_fl.plugin_info()))", check=True)
    expected = json.loads(imported.stdout)
    report, _ = doctor_json()
    active = report["plugins"]["active"]
    assert (active["name"], active["selection"]) == (expected["name"], expected["selection"])
    assert active["device_count"] == expected["device_count"]
    assert {p["name"] for p in report["plugins"]["installed"]} >= {"host"}


def test_json_has_every_section_and_a_clean_environment_passes():
    report, code = doctor_json({"FLAGOS_PLUGIN": "host"})
    assert SECTIONS <= set(report), sorted(report)
    assert code == 0 and report["findings"] == [], report["findings"]
    assert report["versions"]["torch_fl"] and report["versions"]["build"]["accelerator"]
    assert report["routing"]["installed"] and sum(report["routing"]["counts"].values()) > 0
    assert report["routing"]["conf"].endswith(".toml")
    assert report["compile"]["codegen"] == "cpp"  # the host plugin's memory is host-addressable
    assert isinstance(report["distributed"]["collectives"], bool)
    assert set(report["companions"]) == {"FlagGems", "Triton", "TileOps", "FlagCX", "transformers"}


def test_unknown_name_and_bad_value_are_errors():
    env = {"FLAGOS_PLUGIN": "host", "FLAGOS_USE_CACHING_ALOCATOR": "1", "FLAGOS_USE_CACHING_ALLOCATOR": "maybe"}
    report, code = doctor_json(env)
    assert code == 1
    rows = {v["name"]: v for v in report["environment"]["flagos"]}
    assert rows["FLAGOS_USE_CACHING_ALOCATOR"]["known_as"] is None
    assert "did you mean FLAGOS_USE_CACHING_ALLOCATOR" in rows["FLAGOS_USE_CACHING_ALOCATOR"]["problems"][0]
    assert rows["FLAGOS_USE_CACHING_ALLOCATOR"]["known_as"] == "Runtime"
    assert "'maybe' is not a boolean" in rows["FLAGOS_USE_CACHING_ALLOCATOR"]["problems"][0]
    assert rows["FLAGOS_PLUGIN"]["problems"] == []
    assert [f["level"] for f in report["findings"]] == ["error", "error"], report["findings"]
    text = doctor(env)
    assert text.returncode == 1
    assert "error: FLAGOS_USE_CACHING_ALLOCATOR='maybe' is not a boolean" in text.stdout, text.stdout


def test_a_failed_activation_is_a_finding_and_the_rest_is_still_reported():
    proc = doctor({"FLAGOS_PLUGIN": "nonexistent"})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert "error: FLAGOS_PLUGIN=nonexistent: no plugin of that name is installed" in proc.stdout, proc.stdout
    for label in ("versions", "plugins", "companions", "routes", "environment", "compile"):
        assert any(line.startswith(label) for line in proc.stdout.splitlines()), (label, proc.stdout)


def test_forced_operators_and_a_bad_override_are_reported():
    env = {"FLAGOS_PLUGIN": "host", "FLAGOS_OP_mm": "cpu_fallback", "FLAGOS_OP_add__Tensor": "gpu"}
    report, code = doctor_json(env)
    assert code == 1  # the bad override is only parsed when routes install, and still counts
    assert [(r["op"], r["route"]) for r in report["routing"]["forced"]] == [("mm", "cpu_fallback")]
    rows = {v["name"]: v for v in report["environment"]["flagos"]}
    assert rows["FLAGOS_OP_mm"]["problems"] == []
    assert "unknown route" in rows["FLAGOS_OP_add__Tensor"]["problems"][0]


def test_foreign_names_are_read_before_the_import_fills_them():
    report, _ = doctor_json({"FLAGOS_PLUGIN": "host", "TORCHINDUCTOR_COMPILE_THREADS": "3"})
    foreign = {f["name"]: f for f in report["environment"]["foreign"]}
    assert foreign["TORCHINDUCTOR_COMPILE_THREADS"] == {"name": "TORCHINDUCTOR_COMPILE_THREADS",
                                                        "value": "3", "owner": "PyTorch"}
    assert "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER" not in foreign  # what the import step sets
