"""Every wheel's version (tools/build_config/wheel_version.py): torch_fl's
base version, then FLAGOS_WHEEL_PRERELEASE, then +FLAGOS_WHEEL_LOCAL, the
same string for the core wheel, the plugin wheels and the build record; and
the torch range the core wheel declares."""

from __future__ import annotations

import importlib
from importlib import metadata
import os
import subprocess
import sys
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools.build_config import BuildConfigError, resolve  # noqa: E402
from tools.build_config.resolve import project_version, torch_outside_support, torch_requirement  # noqa: E402
from tools.build_config.wheel_version import compose, core_requirements, core_version, plugin_version  # noqa: E402

BASE = project_version()
# The installed torch's minor, as a core wheel built here requires it (in Requires-Dist's order).
_MAJOR, _MINOR = Version(metadata.version("torch")).release[:2]
TORCH_MINOR = f"torch<{_MAJOR}.{_MINOR + 1},>={_MAJOR}.{_MINOR}"


@pytest.mark.parametrize("pre, local, expected", [
    (None, None, "2.10.0"),
    ("rc1", None, "2.10.0rc1"),
    (None, "cuda13.3", "2.10.0+cuda13.3"),
    ("b2", "musa5.2.0", "2.10.0b2+musa5.2.0"),
])
def test_compose_appends_the_pre_release_then_the_local_label(pre, local, expected):
    assert compose("2.10.0", pre, local) == expected
    assert str(Version(expected)) == expected  # already PEP 440's normal form


def test_a_pre_release_sorts_below_its_release():
    assert Version(compose("2.10.0", "rc1", "cuda13.3")) < Version("2.10.0")


@pytest.mark.parametrize("env, expected", [
    ({}, f"{BASE}+cuda13.3"),
    ({"FLAGOS_WHEEL_PRERELEASE": "rc1"}, f"{BASE}rc1+cuda13.3"),
    ({"FLAGOS_WHEEL_LOCAL": "cuda12.8"}, f"{BASE}+cuda12.8"),
    ({"FLAGOS_WHEEL_PRERELEASE": "a1", "FLAGOS_WHEEL_LOCAL": "dev.7"}, f"{BASE}a1+dev.7"),
    ({"FLAGOS_ACCELERATOR": "metax"}, BASE),  # no wheel_local for metax in the platform table
])
def test_the_core_version_is_the_records(env, expected):
    assert core_version(env) == expected == resolve(env).record()["WHEEL_VERSION"]


@pytest.mark.parametrize("name, env, expected", [
    ("host", {}, BASE),  # no platform entry: no default label
    ("host", {"FLAGOS_WHEEL_PRERELEASE": "rc2", "FLAGOS_WHEEL_LOCAL": "test1"}, f"{BASE}rc2+test1"),
    ("musa", {}, f"{BASE}+musa5.2.0"),
    ("cuda", {"FLAGOS_WHEEL_PRERELEASE": "b1"}, f"{BASE}b1+cuda13.3"),
])
def test_a_plugin_takes_the_same_suffixes(name, env, expected):
    assert plugin_version(name, env) == expected


@pytest.mark.parametrize("name, value", [
    ("FLAGOS_WHEEL_PRERELEASE", "dev1"), ("FLAGOS_WHEEL_PRERELEASE", "RC1"),
    ("FLAGOS_WHEEL_LOCAL", "cuda-13.3"), ("FLAGOS_WHEEL_LOCAL", "+cuda13.3"),
])
@pytest.mark.parametrize("version_of", [core_version, lambda env: plugin_version("host", env)])
def test_an_invalid_value_is_refused_naming_the_variable(name, value, version_of):
    with pytest.raises(BuildConfigError) as err:
        version_of({name: value})
    assert str(err.value).startswith(f"[flagos] {name}={value} is not a PEP 440 ")


def test_a_base_version_not_in_normal_form_is_refused():
    with pytest.raises(BuildConfigError, match=r"^\[flagos\] base version '2.10.0-rc1' is not in PEP 440"):
        compose("2.10.0-rc1")


def _core_metadata(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """scikit-build-core's PEP 517 metadata hook for the core wheel, in a
    process of its own (it reads os.environ); it runs no CMake."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_")}
    return subprocess.run(
        [sys.executable, "-c", "import sys, scikit_build_core.build as b; "
                               "print(b.prepare_metadata_for_build_wheel(sys.argv[1]))", str(tmp_path)],
        cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("env", [
    {}, {"FLAGOS_WHEEL_PRERELEASE": "rc1"}, {"FLAGOS_WHEEL_LOCAL": "test1"},
    {"FLAGOS_WHEEL_PRERELEASE": "rc1", "FLAGOS_WHEEL_LOCAL": "test1"},
])
def test_the_core_wheels_metadata_carries_the_version_and_the_torch_range(env, tmp_path):
    proc = _core_metadata(tmp_path, **env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    expected = compose(BASE, env.get("FLAGOS_WHEEL_PRERELEASE"), env.get("FLAGOS_WHEEL_LOCAL", "cuda13.3"))
    dist_info = proc.stdout.strip().splitlines()[-1]
    assert dist_info == f"torch_fl-{expected}.dist-info"
    meta = Parser().parsestr((tmp_path / dist_info / "METADATA").read_text())
    assert meta["Version"] == expected
    torch = [r for r in meta.get_all("Requires-Dist") if r.startswith("torch")]
    assert torch == [TORCH_MINOR]


def test_the_core_wheels_metadata_step_refuses_a_bad_value(tmp_path):
    proc = _core_metadata(tmp_path, FLAGOS_WHEEL_PRERELEASE="post1")
    assert proc.returncode != 0
    assert "[flagos] FLAGOS_WHEEL_PRERELEASE=post1 is not a PEP 440 pre-release suffix" in proc.stdout + proc.stderr
    assert not list(tmp_path.glob("*.dist-info"))


def test_the_declared_torch_range_is_the_tested_minors():
    assert torch_requirement() == ">=2.11,<2.14"


@pytest.mark.parametrize("torch, wanted", [
    ("2.13.0+cpu", "torch>=2.13,<2.14"), ("2.11.0+cu130", "torch>=2.11,<2.12"), ("2.14.0a0+git1234", "torch>=2.14,<2.15"),
])
def test_the_core_wheel_requires_the_torch_minor_it_was_compiled_against(torch, wanted):
    assert core_requirements(torch) == [wanted]


@pytest.mark.parametrize("torch, inside", [
    ("2.11.0", True), ("2.13.0+cpu", True), ("2.13.1+cu130", True),
    ("2.10.0", False), ("2.14.0", False), ("2.14.0a0+git1234", False), ("2.11.0a0", False),
])
def test_a_torch_outside_the_range_is_one_flagos_line(torch, inside):
    line = torch_outside_support(torch)
    if inside:
        assert line is None
    else:
        assert line == (f"[flagos] torch {torch} is outside the versions torch_fl supports "
                        f"(torch>=2.11,<2.14, pyproject.toml): the core may not build or may misbehave")


def test_the_build_warns_once_when_the_installed_torch_is_outside(monkeypatch):
    rc = importlib.import_module("tools.build_config.resolve")  # the module, not the function
    real = rc.versions
    monkeypatch.setattr(rc, "versions", lambda v, root=rc.ROOT: {**real(v, root), "torch": "2.10.0+cpu"})
    warned = [w for w in rc.resolve({}).warnings if "outside the versions torch_fl supports" in w]
    assert warned == [torch_outside_support("2.10.0+cpu")]
