"""The BPU compile path (docs/bpu-compile.md): the FLAGOS_BPU_* variables and
the command line and environment hbdk4 runs with, checked against a stand-in
compiler that records what it was given (hbdk4 is not installed here)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import torch_fl  # noqa: F401  (the declared environment surface)
from torch_fl.bpu import compile_driver, settings

BPU_VARIABLES = (settings.MARCH, settings.CACHE, settings.QUANTIZE, settings.ACT_SCALE, settings.MLIR_LIBS,
                 settings.X86_PYTHON, settings.X86_EMULATOR, settings.X86_STUBS)

# Records its argv and the two variables the driver sets, then writes the
# artifact the driver asked for, as hbdk4 would. As the emulator it is handed
# the x86 python first; as the x86 python it is handed the driver script.
STAND_IN = """#!{python}
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--output") + 1]
with open({record!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv, "cwd": os.getcwd(),
                        "LD_PRELOAD": os.environ.get("LD_PRELOAD"),
                        "PYTHONPATH": os.environ.get("PYTHONPATH")}}) + "\\n")
with open(out, "wb") as f:
    f.write(b"HBM stand-in")
"""


@pytest.fixture(autouse=True)
def bpu_env(monkeypatch, tmp_path):
    for name in BPU_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def stand_in(tmp_path: Path, name: str) -> tuple[Path, Path]:
    record = tmp_path / f"{name}.jsonl"
    script = tmp_path / name
    script.write_text(STAND_IN.format(python=sys.executable, record=str(record)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, record


@pytest.fixture
def x86(tmp_path, monkeypatch):
    """An x86 'CPython' at <prefix>/bin/python3 with <prefix>/../stubs beside it,
    an MLIR library directory and a model; the stand-in is the emulator."""
    prefix = tmp_path / "x86" / "py"
    (prefix / "bin").mkdir(parents=True)
    python = prefix / "bin" / "python3"
    python.write_text("#!/bin/sh\nexit 1\n")
    python.chmod(0o755)
    (tmp_path / "x86" / "stubs").mkdir()
    libs = tmp_path / "mlir"
    libs.mkdir()
    for name in ("libhbdk_extra.so", "libhbtl.so"):
        (libs / name).write_bytes(b"")
    emulator, record = stand_in(tmp_path, "emulator")
    model = tmp_path / "model.onnx"
    model.write_bytes(b"onnx bytes")
    monkeypatch.setenv(settings.X86_PYTHON, str(python))
    monkeypatch.setenv(settings.X86_EMULATOR, str(emulator))
    monkeypatch.setenv(settings.MLIR_LIBS, str(libs))
    monkeypatch.setenv(settings.CACHE, str(tmp_path / "cache"))
    return {"python": python, "stubs": tmp_path / "x86" / "stubs", "libs": libs, "record": record,
            "model": model, "cache": tmp_path / "cache"}


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_defaults_are_the_spec_defaults(tmp_path):
    s = settings.read()
    assert (s.march, s.quantize, s.act_scale) == ("nash-p", True, 0.05)
    assert s.cache == tmp_path / "home" / ".cache" / "torch_fl_bpu"
    assert s.mlir_libs is None and s.x86_python is None and s.x86_emulator is None and s.x86_stubs is None


def test_values_are_read_typed(monkeypatch, tmp_path):
    monkeypatch.setenv(settings.MARCH, "nash-m")
    monkeypatch.setenv(settings.QUANTIZE, "off")
    monkeypatch.setenv(settings.ACT_SCALE, "0.125")
    monkeypatch.setenv(settings.X86_PYTHON, "/opt/x86/py/bin/python3")
    s = settings.read()
    assert (s.march, s.quantize, s.act_scale) == ("nash-m", False, 0.125)
    assert s.x86_stubs == Path("/opt/x86/stubs")  # <x86 python prefix>/../stubs
    monkeypatch.setenv(settings.X86_STUBS, str(tmp_path))
    assert settings.read().x86_stubs == tmp_path


def test_a_bad_march_is_one_error_naming_the_allowed_values(monkeypatch):
    monkeypatch.setenv(settings.MARCH, "nash-x")
    with pytest.raises(RuntimeError) as error:
        settings.read()
    message = str(error.value)
    assert message.startswith("[flagos] FLAGOS_BPU_MARCH='nash-x'") and "\n" not in message
    assert "nash-p, nash-e, nash-m" in message


def test_a_scale_that_cannot_scale_is_refused(monkeypatch):
    monkeypatch.setenv(settings.ACT_SCALE, "-1")
    with pytest.raises(RuntimeError, match=r"^\[flagos\] FLAGOS_BPU_ACT_SCALE"):
        settings.read()


def test_the_cache_is_created_owner_only(tmp_path):
    made = settings.cache_dir(settings.read())
    assert made.is_dir() and stat.S_IMODE(made.stat().st_mode) == 0o700


def test_the_compile_runs_hbdk4_with_every_setting(x86, monkeypatch):
    monkeypatch.setenv(settings.MARCH, "nash-e")
    monkeypatch.setenv(settings.ACT_SCALE, "0.2")
    monkeypatch.setenv("LD_PRELOAD", "/already/there.so")
    artifact = compile_driver.compile_onnx(x86["model"])
    assert artifact.read_bytes() == b"HBM stand-in" and artifact.parent == x86["cache"]
    (got,) = records(x86["record"])
    argv = got["argv"]
    assert argv[1:3] == [str(x86["python"]), str(compile_driver.MAIN)]
    assert argv[argv.index("--march") + 1] == "nash-e"
    assert "--quantize" in argv and "--no-quantize" not in argv
    assert argv[argv.index("--act-scale") + 1] == "0.2"
    assert argv[argv.index("--cache") + 1] == str(x86["cache"])
    assert argv[argv.index("--model") + 1] == str(x86["model"])
    assert got["PYTHONPATH"] == str(x86["stubs"])
    libs = x86["libs"]
    assert got["LD_PRELOAD"] == f"{libs}/libhbtl.so:{libs}/libhbdk_extra.so:/already/there.so"


def test_a_cached_artifact_is_not_compiled_again_and_settings_key_it(x86, monkeypatch):
    first = compile_driver.compile_onnx(x86["model"])
    assert compile_driver.compile_onnx(x86["model"]) == first
    assert len(records(x86["record"])) == 1
    monkeypatch.setenv(settings.QUANTIZE, "0")
    second = compile_driver.compile_onnx(x86["model"])
    assert second != first and len(records(x86["record"])) == 2
    assert "--no-quantize" in records(x86["record"])[1]["argv"]


def test_the_stand_in_as_the_x86_python_on_an_x86_64_host(x86, monkeypatch, tmp_path):
    python, record = stand_in(tmp_path, "python3")
    monkeypatch.setenv(settings.X86_PYTHON, str(python))
    monkeypatch.setenv(settings.X86_STUBS, str(x86["stubs"]))
    monkeypatch.delenv(settings.X86_EMULATOR)
    compile_driver.compile_onnx(x86["model"], machine="x86_64")
    (got,) = records(record)
    assert got["argv"][:2] == [str(python), str(compile_driver.MAIN)]  # no emulator


def test_a_missing_x86_python_says_what_to_set(x86, monkeypatch):
    monkeypatch.delenv(settings.X86_PYTHON)
    with pytest.raises(RuntimeError, match=r"^\[flagos\] BPU compile: .*set FLAGOS_BPU_X86_PYTHON"):
        compile_driver.compile_onnx(x86["model"])


def test_a_missing_emulator_says_what_to_set(x86, monkeypatch):
    monkeypatch.delenv(settings.X86_EMULATOR)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match=r"^\[flagos\] BPU compile: this host is aarch64.*"
                                           r"set FLAGOS_BPU_X86_EMULATOR"):
        compile_driver.invocation(x86["model"], machine="aarch64")
    monkeypatch.setenv(settings.X86_EMULATOR, str(x86["model"].parent / "no-such-box64"))
    with pytest.raises(RuntimeError, match="FLAGOS_BPU_X86_EMULATOR=.*not an executable"):
        compile_driver.invocation(x86["model"], machine="aarch64")


def test_box64_from_path_is_the_default_emulator(x86, monkeypatch, tmp_path):
    monkeypatch.delenv(settings.X86_EMULATOR)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    box64, _ = stand_in(bindir, "box64")
    monkeypatch.setenv("PATH", str(bindir))
    assert compile_driver.invocation(x86["model"], machine="aarch64").argv[0] == str(box64)


def test_missing_stubs_and_libraries_are_named(x86, monkeypatch, tmp_path):
    x86["stubs"].rmdir()
    with pytest.raises(RuntimeError, match=r"FLAGOS_BPU_X86_STUBS=.*derived from FLAGOS_BPU_X86_PYTHON"):
        compile_driver.invocation(x86["model"])
    x86["stubs"].mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(settings.MLIR_LIBS, str(empty))
    with pytest.raises(RuntimeError, match=r"FLAGOS_BPU_MLIR_LIBS=.*holds no \.so"):
        compile_driver.invocation(x86["model"])


def test_a_failed_compile_reports_the_compiler_output(x86, monkeypatch, tmp_path):
    failing = tmp_path / "failing"
    failing.write_text(f"#!{sys.executable}\nimport sys\nsys.exit('hbdk4: unsupported op Foo')\n")
    failing.chmod(0o755)
    monkeypatch.setenv(settings.X86_EMULATOR, str(failing))
    with pytest.raises(RuntimeError, match=r"(?s)^\[flagos\] BPU compile: hbdk4 failed \(exit 1\).*unsupported op Foo"):
        compile_driver.compile_onnx(x86["model"])
    assert not any(x86["cache"].glob("*.hbm"))


def test_the_driver_script_reports_a_missing_hbdk4(tmp_path):
    """The script the x86 python runs, run here: no hbdk4, one clear line."""
    import subprocess
    proc = subprocess.run([sys.executable, str(compile_driver.MAIN), "--model", str(tmp_path / "m.onnx"),
                           "--march", "nash-p", "--quantize", "--act-scale", "0.05", "--cache", str(tmp_path),
                           "--output", str(tmp_path / "m.hbm")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode != 0
    assert "[flagos] BPU compile:" in proc.stderr and "FLAGOS_BPU_X86_PYTHON" in proc.stderr, proc.stderr
