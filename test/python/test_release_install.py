"""What a user gets from `pip install torch_fl torch_fl-plugin-<vendor>`: the
core wheel (`pip wheel --no-build-isolation .`) and a plugin wheel
(`python -m tools.plugin_wheel`), installed into a fresh virtual environment
that holds only torch, run the demo there, outside the source tree."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

from conftest import ROOT

sys.path.insert(0, str(ROOT))
from tools.build_config.wheel_version import core_version  # noqa: E402

# The build and the installs must not see the developer's release variables
# or the routing/plugin choices of the test run.
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGOS_", "PYTHONPATH"))}


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=kw.pop("env", CLEAN), **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    # The core wheel reuses the editable install's build folder (pyproject's
    # build-dir): after `make setup` only packaging is left to do. Its
    # settings, tests on, keep that folder as make setup left it (a user's
    # build has them off; nothing of them is installed either way).
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
         "--disable-pip-version-check", "-C", "cmake.define.FLAGOS_BUILD_TESTS=ON", "-w", out, "."],
        cwd=ROOT, timeout=1500)
    plugin = run([sys.executable, "-m", "tools.plugin_wheel", "host", "--out", out, "--build-dir", out / "build"],
                 cwd=ROOT, timeout=900).stdout.strip().splitlines()[-1]
    core = [p for p in out.glob("torch_fl-*.whl")]
    assert len(core) == 1, list(out.iterdir())
    return {"core": core[0], "plugin": Path(plugin)}


@pytest.fixture(scope="module")
def venv(wheels, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", where], timeout=300)
    py = where / "bin" / "python"
    torch_release = torch.__version__.split("+")[0]
    run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"torch=={torch_release}"], timeout=900)
    # --no-index: the wheels' own requirements must already be met by torch alone.
    run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
         wheels["core"], wheels["plugin"]], timeout=600)
    return py


def test_the_core_wheel_carries_the_release_version_and_its_torch_minor(wheels):
    name = wheels["core"].name
    assert name.startswith(f"torch_fl-{core_version(CLEAN)}-"), name
    with zipfile.ZipFile(wheels["core"]) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        names = z.namelist()
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    assert f"Requires-Dist: torch<{major}.{minor + 1},>={major}.{minor}" in meta.splitlines()  # the minor built against
    assert "torch_fl/lib/libtorch_fl_core.so" in names and "torch_fl/plugins/host/libflagos_host.so" in names
    assert not any(n.startswith(("test/", "tools/")) for n in names), "the wheel ships the package only"


# What a core library may need at run time: torch's own libraries (the
# torch wheel installs them) and the C/C++ runtime every manylinux system has.
RUNTIME_LIBRARIES = ("libc10.so", "libtorch_cpu.so", "libtorch_python.so", "libtorch_fl_core.so", "libstdc++.so",
                     "libgcc_s.so", "libc.so", "libm.so", "ld-linux")


def test_the_core_wheel_needs_no_shared_library_of_the_build_machine(wheels, tmp_path):
    with zipfile.ZipFile(wheels["core"]) as z:
        z.extractall(tmp_path)
    for lib in [tmp_path / "torch_fl" / "lib" / "libtorch_fl_core.so", *tmp_path.glob("torch_fl/_C*.so")]:
        dynamic = run(["readelf", "-d", lib], env=os.environ).stdout
        needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
        assert needed and all(n.startswith(RUNTIME_LIBRARIES) for n in needed), (lib.name, needed)


def test_the_installed_wheels_run_the_demo_in_a_venv_with_only_torch(venv, wheels, tmp_path):
    # Outside the source tree, so that nothing is imported from it.
    demo = tmp_path / "demo.py"
    shutil.copy(ROOT / "tools" / "demo.py", demo)
    proc = run([venv, demo], cwd=tmp_path, timeout=600)
    assert proc.stdout.strip().splitlines()[-1] == "PASS", proc.stdout[-2000:]

    probe = run([venv, "-c", """
import importlib.metadata as m, json, torch_fl
print(json.dumps({"version": m.version("torch_fl"), "file": torch_fl.__file__,
                  "plugins": sorted(c["origin"] for c in torch_fl.installed_plugins() if c["name"] == "host"),
                  "dists": sorted(d.metadata["Name"] for d in m.distributions())}))
"""], cwd=tmp_path, timeout=300)
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    assert seen["version"] == core_version(CLEAN)
    assert seen["file"].startswith(str(venv.parent.parent)), seen["file"]
    assert "entry_point" in seen["plugins"], seen["plugins"]  # the plugin wheel is found beside the core's own
    # Only torch, its own requirements and the two wheels: nothing else was needed.
    assert {"torch", "torch_fl", "torch_fl_plugin_host"} <= {d.replace("-", "_") for d in seen["dists"]}
    assert not {"transformers", "pytest", "numpy"} & set(seen["dists"]), seen["dists"]


VENDORS = ("cuda", "ppu", "metax", "dcu", "musa", "gcu", "tsingmicro", "bpu", "ascend")


def plugin_targets(tmp_path: Path, *defines: str) -> set[str]:
    """The plugin libraries a configuration of this tree would build."""
    build = tmp_path / "configure"
    run(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", f"-DPython_EXECUTABLE={sys.executable}",
         f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}", *defines], timeout=300)
    targets = run(["cmake", "--build", build, "--target", "help"], timeout=60).stdout
    return {name for name in ("host", *VENDORS) if re.search(rf"^flagos_{name}:", targets, re.M)}


def test_a_users_core_wheel_carries_host_and_its_accelerator_alone(tmp_path):
    # pyproject's settings (tests off): every other vendor is its own plugin wheel.
    assert plugin_targets(tmp_path, "-DFLAGOS_BUILD_TESTS=OFF", "-DFLAGOS_ACCELERATOR=musa") == {"host", "musa"}
    # The development build makes every vendor, for the simulated-runtime suites.
    assert plugin_targets(tmp_path, "-DFLAGOS_BUILD_TESTS=ON") == {"host", *VENDORS}


def test_auditwheel_names_the_manylinux_policy_the_core_wheel_meets(wheels):
    """torch's own libraries are the wheel's only external ones (the torch
    wheel provides them: `auditwheel repair --exclude` keeps them out), and
    its symbol versions meet a manylinux policy, set by the build machine's
    glibc (docs/architecture.md, "Packaging")."""
    shown = json.loads(run([sys.executable, "-m", "auditwheel", "show", "--json", wheels["core"]],
                           timeout=300).stdout)
    assert re.fullmatch(r"manylinux_2_\d+_x86_64", shown["sym_tag"]), shown["sym_tag"]
    assert set(shown["external_libs"]) <= {"libc10.so", "libtorch_cpu.so", "libtorch_python.so", "libtorch.so"}, \
        shown["external_libs"]
