"""Shared fixtures: every torch-level behaviour is checked in a fresh
subprocess (a real `import torch_fl` under a crafted environment), since the
plugin choice is made once per process."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import simrt_dir  # noqa: E402


# Names `import torch_fl` sets when unset (docs/environment-variables.md,
# "set if unset"): a test module importing torch_fl in this process must not
# hand its values to the fresh interpreters as if a user had exported them.
_SET_BY_IMPORT = ("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "TORCHINDUCTOR_COMPILE_THREADS", "GEMS_VENDOR",
                  "TORCH_DEVICE_BACKEND_AUTOLOAD", "FLAGCX_TORCH_BACKEND", "TRITON_ENABLE_TASKQUEUE",
                  "HB_DNN_USER_DEFINED_L2M_SIZES")
_EXPORTED_AT_START = {k: os.environ[k] for k in _SET_BY_IMPORT if k in os.environ}


def _clean_env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") and k not in _SET_BY_IMPORT}
    env.update(_EXPORTED_AT_START)
    env.update(extra or {})
    return env


def run_python(code: str, env: dict[str, str] | None = None, args: list[str] | None = None,
               check: bool = False) -> subprocess.CompletedProcess:
    """Runs `code` (or `-m ...` when args are given) in a fresh interpreter."""
    cmd = [sys.executable] + (args if args is not None else ["-c", textwrap.dedent(code)])
    proc = subprocess.run(cmd, env=_clean_env(env), capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def exported_symbols(library: str | Path) -> list[str]:
    """The dynamic symbols `library` defines (a plugin must define exactly
    flagos_plugin_get_api)."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]


def flagos_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("[flagos]")]


@pytest.fixture(scope="session")
def simrt() -> Path:
    """build/<tag>/simrt: the simulated vendor runtimes (test/simrt)."""
    found = simrt_dir()
    if found is None:
        pytest.fail("simulated runtimes not built: run `make setup`")
    return found


@pytest.fixture(scope="session")
def test_plugin_dir() -> Path:
    dirs = glob.glob(str(ROOT / "build" / "*" / "out" / "test_plugins"))
    if not dirs:
        pytest.fail("fake plugins not built: run `make setup`")
    return Path(max(dirs, key=os.path.getmtime))


@pytest.fixture(scope="session")
def fake_plugin(test_plugin_dir):
    def path(mode: str) -> str:
        p = test_plugin_dir / f"fake_{mode}" / f"libflagos_fake_{mode}.so"
        assert p.exists(), p
        return str(p)

    return path


@pytest.fixture
def entry_point_plugin(tmp_path):
    """Installs a throwaway 'plugin wheel' advertising `name` -> `library` via
    the torch_fl.plugins entry-point group; returns the env that makes it visible."""

    def install(name: str, library: str) -> dict[str, str]:
        pkg = tmp_path / f"fakewheel_{name}"
        pkg.mkdir()
        (pkg / "__init__.py").write_text(f"def library_path():\n    return {library!r}\n")
        dist = tmp_path / f"fakewheel_{name}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakewheel-{name}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(
            f"[torch_fl.plugins]\n{name} = fakewheel_{name}:library_path\n")
        return {"PYTHONPATH": str(tmp_path)}

    return install


@pytest.fixture(scope="session")
def installed_plugins() -> list[dict]:
    """torch_fl.installed_plugins() of this build, in discovery order."""
    proc = run_python("""
        import json, torch_fl
        print(json.dumps(torch_fl.installed_plugins()))
    """, env={"FLAGOS_PLUGIN": "host"}, check=True)
    import json

    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def built_accelerators(installed_plugins) -> list[str]:
    """Accelerator plugins of this build besides host (e.g. cuda where the CUDA
    runtime was found at build time), in discovery order."""
    return [p["name"] for p in installed_plugins if p["name"] != "host"]


@pytest.fixture(scope="session")
def host_fallback_reason(installed_plugins):
    """Why the host plugin was chosen implicitly, on a machine where the
    built accelerator plugins find no device (plugin_info()["selection"];
    printed under FLAGOS_LOG=plugin); `extra` are entry-point plugins'
    reasons, which are reported first."""
    def reason(*extra: str) -> str:
        # A plugin whose requirements are unmet here is passed over unloaded.
        reasons = list(extra) + [f"{p['name']}: {p.get('unavailable', '0 devices')}"
                                 for p in installed_plugins if p["name"] != "host"]
        if not reasons:
            return "no accelerator plugin installed; using the host plugin"
        return f"no accelerator plugin found a device ({', '.join(reasons)}); using the host plugin"

    return reason


@pytest.fixture
def fresh_dynamo():
    """Dynamo's caches emptied before and after a compile test, so that one
    test's compiled graphs and guards never serve another."""
    import torch

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def cpp_codegen_only():
    """The marks of a test module for the host plugin's cpp codegen path."""
    import torch_fl

    return [pytest.mark.skipif(torch_fl.compile.codegen(0) != "cpp",
                               reason="the host plugin's cpp codegen path is tested here"),
            pytest.mark.usefixtures("fresh_dynamo")]
