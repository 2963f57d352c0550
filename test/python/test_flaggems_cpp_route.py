"""The `flaggems_cpp` route (docs/routing.md): FlagGems' C++ runtime found
through FLAGGEMS_DIR, checked against FLAGGEMS_SOURCE_DIR, loaded at import,
and its `flag_gems::<op>` operators called from the core on the boxed
operands. FlagGems' runtime registers CUDA kernels; here a stand-in
registers CPU ones (the host plugin's stock target) from Python before
torch_fl loads an empty stand-in c_operators library, so that what is
checked is torch_fl's side: finding, checking, loading, matching signatures,
routing and the call."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import flagos_lines, run_python

# Registers the stand-in's operators, then imports torch_fl. Its mm and
# argmax count their calls; its addmm takes other arguments than
# aten::addmm; its softmax is one the route never takes (FlagGems' is wrong).
STAND_IN = """
import torch
calls = {"mm": 0, "argmax": 0, "softmax": 0}
lib = torch.library.Library("flag_gems", "DEF")
lib.define("mm(Tensor self, Tensor mat2) -> Tensor")
lib.define("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
lib.define("softmax(Tensor input, int dim, bool half_to_float=False) -> Tensor")
lib.define("addmm(Tensor self, Tensor mat1) -> Tensor")
def mm(a, b):
    calls["mm"] += 1
    assert a.device.type == "cpu", a.device  # the host plugin's operands, boxed as CPU tensors
    return torch.mm(a, b)
def argmax(x, dim=None, keepdim=False):
    calls["argmax"] += 1
    return torch.argmax(x, dim, keepdim)
def softmax(x, dim, half_to_float=False):
    calls["softmax"] += 1
    return torch._softmax(x, dim, half_to_float)
lib.impl("mm", mm, "CPU")
lib.impl("argmax", argmax, "CPU")
lib.impl("softmax", softmax, "CPU")
lib.impl("addmm", lambda a, b: a, "CPU")
import torch_fl
"""

CALL = STAND_IN + """
import json
a, b = torch.randn(5, 7), torch.randn(7, 3)
out = torch.mm(a.to("flagos"), b.to("flagos"))
am = torch.argmax(a.to("flagos"), 1)
sm = torch.softmax(a.to("flagos"), 1)
routes = {r["op"]: [r["route"], r["why"]] for r in torch_fl.routes()}
print(json.dumps({"device": str(out.device), "mm": torch.equal(out.cpu(), torch.mm(a, b)),
                  "argmax": torch.equal(am.cpu(), torch.argmax(a, 1)),
                  "softmax": torch.allclose(sm.cpu(), torch.softmax(a, 1)), "calls": calls,
                  "routes": {op: routes[op] for op in ("mm", "argmax", "_softmax", "addmm", "neg")}}))
"""


@pytest.fixture
def runtime(tmp_path) -> dict[str, str]:
    """A FlagGems C++ install prefix (CMake package, an empty c_operators
    library, the version it was built from) and a flag_gems source
    directory of that version; returns the env naming both."""
    prefix = tmp_path / "prefix"
    (prefix / "lib" / "cmake" / "FlagGems").mkdir(parents=True)
    (prefix / "lib" / "cmake" / "FlagGems" / "FlagGemsConfig.cmake").write_text("# stand-in\n")
    (prefix / "flaggems_version.txt").write_text("9.9\n")
    source = tmp_path / "source" / "flag_gems"
    (source / "ops").mkdir(parents=True)
    (source / "__init__.py").write_text('__version__ = "9.9"\n')
    (source / "ops" / "mm.py").write_text("# stand-in\n")
    c = tmp_path / "empty.c"
    c.write_text("int flagos_stand_in;\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(prefix / "c_operators.cpython-stand-in.so"), str(c)],
                   check=True)
    return {"FLAGGEMS_DIR": str(prefix / "lib" / "cmake" / "FlagGems"), "FLAGGEMS_SOURCE_DIR": str(source),
            "TORCH_DEVICE_BACKEND_AUTOLOAD": "0",  # torch_fl imported after the stand-in registers
            "FLAGOS_OP_mm": "flaggems_cpp", "FLAGOS_OP_argmax": "flaggems_cpp", "FLAGOS_OP__softmax": "flaggems_cpp",
            "FLAGOS_OP_addmm": "flaggems_cpp", "FLAGOS_OP_neg": "flaggems_cpp"}


def build_has_flaggems_cpp() -> bool:
    proc = run_python("import torch_fl; print(torch_fl.build_config()['KERNELS']['flaggems_cpp'])", check=True)
    return proc.stdout.strip().splitlines()[-1] == "True"


def test_operators_flaggems_registers_run_on_the_route(runtime):
    if not build_has_flaggems_cpp():
        pytest.skip("this build did not compile flaggems_cpp")
    proc = run_python(CALL, env=runtime, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["device"] == "flagos:0" and out["mm"] and out["argmax"] and out["softmax"]
    assert out["calls"] == {"mm": 1, "argmax": 1, "softmax": 0}
    assert out["routes"]["mm"][0] == "flaggems_cpp" and out["routes"]["argmax"][0] == "flaggems_cpp"
    # addmm's flag_gems operator takes other arguments, neg has none, and
    # FlagGems' softmax is wrong past 128 columns: each takes its next route,
    # all in one line.
    for op in ("addmm", "neg", "_softmax"):
        assert out["routes"][op][0] != "flaggems_cpp", out["routes"][op]
        assert "demoted from flaggems_cpp" in out["routes"][op][1]
    assert any("flaggems_cpp" in line and "addmm" in line and "neg" in line and "_softmax" in line
               for line in flagos_lines(proc.stderr)), \
        proc.stderr


@pytest.mark.parametrize("change, cause", [
    ({"FLAGGEMS_SOURCE_DIR": ""}, "FLAGGEMS_SOURCE_DIR is not set"),
    ({"FLAGGEMS_DIR": "/nonexistent"}, "FLAGGEMS_DIR=/nonexistent holds no FlagGemsConfig.cmake"),
    ({"version": "9.8"}, "is flag_gems 9.8, but the C++ runtime"),
    ({"library": b"not a library"}, "does not load"),
])
def test_a_runtime_that_cannot_serve_demotes_every_route_with_its_reason(runtime, change, cause):
    if not build_has_flaggems_cpp():
        pytest.skip("this build did not compile flaggems_cpp")
    env = {**runtime, **{k: v for k, v in change.items() if k not in ("version", "library")}}
    if "library" in change:
        prefix = os.path.dirname(os.path.dirname(os.path.dirname(runtime["FLAGGEMS_DIR"])))
        with open(os.path.join(prefix, "c_operators.cpython-stand-in.so"), "wb") as f:
            f.write(change["library"])
    if "version" in change:
        with open(f"{runtime['FLAGGEMS_SOURCE_DIR']}/__init__.py", "w") as f:
            f.write(f'__version__ = "{change["version"]}"\n')
    proc = run_python(CALL, env=env, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["mm"] and out["calls"] == {"mm": 0, "argmax": 0, "softmax": 0}
    assert all(route != "flaggems_cpp" for route, _ in out["routes"].values())
    lines = [line for line in flagos_lines(proc.stderr) if "flaggems_cpp" in line]
    assert len(lines) == 1 and cause in lines[0], proc.stderr


def test_forcing_flaggems_without_its_python_layer_takes_the_cpp_runtime(runtime):
    """FLAGOS_DISABLE_FLAGGEMS_PY=1 is FlagGems' C++-only mode: FLAGOS_FORCE_BACKEND=flaggems
    then repins the ops FlagGems' C++ runtime serves onto flaggems_cpp."""
    if not build_has_flaggems_cpp():
        pytest.skip("this build did not compile flaggems_cpp")
    env = {k: v for k, v in runtime.items() if not k.startswith("FLAGOS_OP_")}
    code = STAND_IN + """
import json
a, b = torch.randn(5, 7), torch.randn(7, 3)
ok = torch.equal(torch.mm(a.to("flagos"), b.to("flagos")).cpu(), torch.mm(a, b))
routes = {r["op"]: r["route"] for r in torch_fl.routes()}
try:
    torch.softmax(a.to("flagos"), 1)
    softmax = "ran"
except RuntimeError as exc:
    softmax = str(exc)
print(json.dumps({"ok": ok, "calls": calls, "mm": routes["mm"], "_softmax": routes["_softmax"], "softmax": softmax}))
"""
    proc = run_python(code, env={**env, "FLAGOS_FORCE_BACKEND": "flaggems", "FLAGOS_DISABLE_FLAGGEMS_PY": "1"},
                      check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["calls"]["mm"] == 1 and out["mm"] == "flaggems_cpp"
    # FlagGems implements _softmax in Python only (its C++ softmax is never
    # taken): forced, it raises naming the disabled layer, as the spec says.
    assert out["_softmax"] == "none"
    assert "FLAGOS_DISABLE_FLAGGEMS_PY=1" in out["softmax"], out["softmax"]


def test_doctor_reports_the_route(runtime):
    proc = run_python("", env={**runtime, "FLAGGEMS_SOURCE_DIR": ""}, args=["-m", "torch_fl", "doctor"])
    assert "its C++ route:" in proc.stdout, proc.stdout
