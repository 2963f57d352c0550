"""Torch-level suite: in-process tests of the flagos device as PyTorch sees it.

torch and torch_fl are imported once here, before any test module (and
before torch.testing's device-type machinery, which test_opinfo.py needs to
see the backend already registered). Nothing here is autouse: tests that
change the current device, stream or RNG state restore it themselves, so the
suite never disturbs other tests sharing the process.

Behaviour that needs another environment (FLAGOS_USE_CACHING_ALLOCATOR=0,
the host plugin's memory_mb, fork) runs in a subprocess via `run_flagos`,
which keeps this run's plugin options (so the strict run stays strict there).

Markers: `two_devices` skips where fewer than 2 flagos devices exist;
`host_plugin` skips unless the active plugin is the host reference plugin.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_fl

PLUGIN = torch_fl.plugin_info()


def _requested_options() -> dict[str, str]:
    text = os.environ.get("FLAGOS_PLUGIN_OPTIONS", "")
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {k.strip(): v.strip() for k, v in pairs}


REQUESTED = _requested_options()
STRICT = REQUESTED.get("strict") == "1"

# The strict run must really be strict: a silently ignored option would make
# "passes on the strict host plugin" meaningless.
if STRICT:
    assert PLUGIN["options"].get("strict") == "1", (
        f"FLAGOS_PLUGIN_OPTIONS asks for strict=1 but the active plugin has {PLUGIN['options']}")


def pytest_configure(config):
    config.addinivalue_line("markers", "two_devices: needs at least two flagos devices")
    config.addinivalue_line("markers", "host_plugin: needs the host reference plugin (options, testing hooks)")


def pytest_report_header(config):
    return f"flagos plugin: {PLUGIN['name']} ({PLUGIN['device_count']} devices), options {PLUGIN['options']}"


def pytest_collection_modifyitems(config, items):
    few = pytest.mark.skip(reason="needs two flagos devices")
    not_host = pytest.mark.skip(reason=f"needs the host plugin (active: {PLUGIN['name']})")
    for item in items:
        if "two_devices" in item.keywords and torch.flagos.device_count() < 2:
            item.add_marker(few)
        if "host_plugin" in item.keywords and PLUGIN["name"] != "host":
            item.add_marker(not_host)


def _subprocess_env(options: dict[str, str] | None, env: dict[str, str] | None) -> dict[str, str]:
    """This run's environment, on the very plugin this run tests, with
    `options` merged into its plugin options and `env` on top."""
    out = dict(os.environ)
    out["FLAGOS_PLUGIN"] = PLUGIN["path"]
    merged = dict(REQUESTED)
    merged.update(options or {})
    out.pop("FLAGOS_PLUGIN_OPTIONS", None)
    if merged:
        out["FLAGOS_PLUGIN_OPTIONS"] = ",".join(f"{k}={v}" for k, v in merged.items())
    out.update(env or {})
    return out


def _script(tmp_path, code: str, timeout: float):
    """`code` as a script with torch and torch_fl imported, which dumps its
    threads' stacks if it hangs until shortly before `timeout`; a file, so
    multiprocessing "spawn" can re-import it."""
    script = tmp_path / "script.py"
    script.write_text(
        "import faulthandler\n"
        f"faulthandler.dump_traceback_later({timeout - 10}, exit=True)\n"
        "import torch\nimport torch_fl\n" + textwrap.dedent(code))
    return script


@pytest.fixture
def run_flagos(tmp_path):
    """Runs a script (torch and torch_fl already imported) in a fresh
    interpreter with plugin `options` merged into this run's and extra `env`;
    returns its stdout and fails the test, showing stderr, on a non-zero exit.
    A script that hangs dumps its threads' stacks before the timeout."""

    def run(code: str, options: dict[str, str] | None = None, env: dict[str, str] | None = None,
            timeout: float = 150) -> str:
        script = _script(tmp_path, code, timeout)
        proc = subprocess.run([sys.executable, str(script)], env=_subprocess_env(options, env),
                              capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
        assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        return proc.stdout

    return run


@pytest.fixture
def run_flagos_copies(tmp_path):
    """Runs a script as run_flagos does, `copies` times, `at_once` of them at
    a time (a loaded machine widens races); returns each run's exit status
    and stderr."""

    def run(code: str, copies: int, at_once: int, timeout: float = 150) -> list[tuple[int, str]]:
        script = _script(tmp_path, code, timeout)
        results = []
        for start in range(0, copies, at_once):
            procs = [subprocess.Popen([sys.executable, str(script)], env=_subprocess_env(None, None),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
                     for _ in range(min(at_once, copies - start))]
            for proc in procs:
                _, err = proc.communicate(timeout=timeout)
                results.append((proc.returncode, err))
        return results

    return run


@pytest.fixture
def delay():
    """delay(stream, seconds): the plugin's testing hook pauses `stream`, so
    that work queued behind it is observably pending; every device is idle
    again after the test. Skips where the active plugin has no testing
    extension."""
    if not torch_fl._C._testing_has_delay():
        pytest.skip(f"plugin '{PLUGIN['name']}' has no testing extension (stream_enqueue_delay)")

    def enqueue(stream: torch.Stream, seconds: float) -> None:
        torch_fl._C._testing_enqueue_delay(stream, int(seconds * 1e6))

    yield enqueue
    # A pause still pending would hold up the next test's streams.
    for d in range(torch.flagos.device_count()):
        torch.flagos.synchronize(d)


@pytest.fixture
def rng_restored():
    """Seeding tests run inside this: every generator (CPU and flagos) is
    put back afterwards."""
    devices = list(range(torch.flagos.device_count()))
    with torch.random.fork_rng(devices=devices, device_type="flagos"):
        yield
