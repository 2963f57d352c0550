"""A plugin wheel (`python -m tools.plugin_wheel NAME`): plugins/NAME built on
its own against include/ (no torch, no core), packaged as
torch_fl-plugin-NAME, and found by torch_fl through its torch_fl.plugins entry
point once pip has installed it."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, exported_symbols, run_python

sys.path.insert(0, str(ROOT))
from tools.build_config.resolve import project_version  # noqa: E402
from tools.build_config.wheel_version import compose  # noqa: E402


# The release variables, as the release workflow sets them for a candidate.
RELEASE_ENV = {"FLAGOS_WHEEL_PRERELEASE": "rc1", "FLAGOS_WHEEL_LOCAL": "test1"}


def build_wheel(name: str, out: Path, env: dict[str, str] | None = None) -> Path:
    # A build folder of its own: test shards may build the same plugin at once.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_WHEEL_")}
    proc = subprocess.run([sys.executable, "-m", "tools.plugin_wheel", name, "--out", str(out),
                           "--build-dir", str(out / "build")], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**clean, **(env or {})})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheel = Path(proc.stdout.strip().splitlines()[-1])
    assert wheel.parent == out and wheel.is_file(), proc.stdout[-2000:]
    return wheel


def pip_install(wheel: Path, target: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--target", str(target), str(wheel)], check=True, timeout=300)


@pytest.fixture(scope="module")
def host_wheel(tmp_path_factory) -> Path:
    return build_wheel("host", tmp_path_factory.mktemp("dist"), RELEASE_ENV)


@pytest.fixture(scope="module")
def installed_host_wheel(host_wheel, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    pip_install(host_wheel, site)
    return site


def test_the_wheel_is_named_and_recorded_as_pip_expects(host_wheel):
    # torch_fl's version with the pre-release and local label of the release variables.
    version = compose(project_version(), "rc1", "test1")
    assert version.endswith("rc1+test1")
    assert host_wheel.name.startswith(f"torch_fl_plugin_host-{version}-py3-none-linux_")
    with zipfile.ZipFile(host_wheel) as zf:
        names = set(zf.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
        assert {"torch_fl_plugin_host/__init__.py", "torch_fl_plugin_host/libflagos_host.so",
                f"{dist_info}/METADATA", f"{dist_info}/WHEEL", f"{dist_info}/entry_points.txt"} <= names
        assert dist_info == f"torch_fl_plugin_host-{version}.dist-info"
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        assert "Name: torch_fl-plugin-host\n" in metadata and f"Version: {version}\n" in metadata
        assert zf.read(f"{dist_info}/entry_points.txt").decode() == \
            "[torch_fl.plugins]\nhost = torch_fl_plugin_host:library_path\n"
        # Every file but RECORD itself is listed with its size and hash.
        record = {}
        for line in zf.read(f"{dist_info}/RECORD").decode().splitlines():
            path, digest, size = line.rsplit(",", 2)
            record[path] = (digest, size)
        assert set(record) == names
        for path in names - {f"{dist_info}/RECORD"}:
            data = zf.read(path)
            digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert record[path] == (digest, str(len(data))), path


def test_the_wheels_library_exports_only_the_entry_symbol(installed_host_wheel):
    lib = installed_host_wheel / "torch_fl_plugin_host" / "libflagos_host.so"
    assert exported_symbols(lib) == ["flagos_plugin_get_api"]


def test_an_installed_plugin_wheel_is_found_through_its_entry_point_and_runs_the_device(installed_host_wheel):
    lib = installed_host_wheel / "torch_fl_plugin_host" / "libflagos_host.so"
    proc = run_python("""
        import json, torch, torch_fl
        found = [c for c in torch_fl.installed_plugins() if c["origin"] == "entry_point"]
        x = torch.arange(4.0, device="flagos") * 2
        print(json.dumps({"found": found, "active": torch_fl.plugin_info()["path"], "x": x.cpu().tolist()}))
    """, env={"PYTHONPATH": str(installed_host_wheel), "FLAGOS_PLUGIN": str(lib)}, check=True)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["found"] == [{"name": "host", "path": str(lib), "origin": "entry_point"}]
    assert seen["active"] == str(lib)
    assert seen["x"] == [0.0, 2.0, 4.0, 6.0]


def test_a_refused_release_variable_stops_the_wheel_before_it_builds(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tools.plugin_wheel", "host", "--out", str(tmp_path),
                           "--build-dir", str(tmp_path / "build")], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "FLAGOS_WHEEL_PRERELEASE": "dev1"})
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("[flagos] FLAGOS_WHEEL_PRERELEASE=dev1 is not a PEP 440 pre-release "
                                   "suffix; use a<N>, b<N> or rc<N> (a1, b2, rc1)")
    assert not (tmp_path / "build").exists()


def test_an_unknown_plugin_name_fails_in_one_clear_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tools.plugin_wheel", "nosuch", "--out", str(tmp_path),
                           "--build-dir", str(tmp_path / "build")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1
    assert "[flagos] no plugin 'nosuch' under" in proc.stderr + proc.stdout
    assert "[flagos] plugin_wheel: cmake -S failed for plugins/nosuch" in proc.stderr
    assert not list(tmp_path.glob("*.whl"))


@pytest.mark.parametrize("vendor", ["cuda", "musa"])
def test_a_cuda_shaped_wheel_carries_its_probe_and_needs_no_sdk(vendor, tmp_path):
    # Built from include/ alone on a machine without any SDK: the runtime is
    # opened at first use, so the library needs nothing but libc.
    site = tmp_path / "site"
    pip_install(build_wheel(vendor, tmp_path / "dist"), site)
    package = site / f"torch_fl_plugin_{vendor}"
    lib = package / f"libflagos_{vendor}.so"
    probe = package / f"flagos-{vendor}-probe"
    assert probe.is_file() and probe.stat().st_mode & 0o111, "the plugin looks for its probe in its own folder"
    assert exported_symbols(lib) == ["flagos_plugin_get_api"]
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert all(n.startswith(("libc.so", "libm.so", "ld-linux")) for n in needed), needed
    assert (package / "libflagos_cuda.toml").is_file() == (vendor == "cuda"), "requirements ship beside it"
    # Found through its entry point; `info` activates it even where it finds
    # no device (an import would refuse that).
    proc = run_python("", args=["-m", "torch_fl", "info"],
                      env={"PYTHONPATH": str(site), "FLAGOS_PLUGIN": str(lib)}, check=True)
    info = json.loads(proc.stdout)
    assert info["name"] == vendor and info["abi"] == "1.7"


def test_a_cuda_wheel_bundles_its_runtime_and_the_plugin_opens_it_unless_disabled(simrt, tmp_path):
    """The simulated libcudart as the asset: the wheel carries it in
    cuda_assets/, the plugin (and its probe) opens it when no copy is loaded
    and the SDK folder holds only the driver, and FLAGOS_DISABLE_CUDA_ASSETS=1
    leaves it alone. FLAGOS_SKIP_CUDA_ASSETS=1 bundles nothing."""
    sim_lib = simrt / "cuda" / "lib64"
    site = tmp_path / "site"
    pip_install(build_wheel("cuda", tmp_path / "dist", {"FLAGOS_CUDA_ASSETS_DIR": str(sim_lib)}), site)
    package = site / "torch_fl_plugin_cuda"
    assert sorted(p.name for p in (package / "cuda_assets").iterdir()) == ["libcudart.so.13"]
    driver_only = tmp_path / "cuda_home" / "lib64"
    driver_only.mkdir(parents=True)
    shutil.copy2(sim_lib / "libcuda.so.1", driver_only / "libcuda.so.1")
    env = {"PYTHONPATH": str(site), "FLAGOS_PLUGIN": str(package / "libflagos_cuda.so"),
           "CUDA_HOME": str(driver_only.parent), "LD_LIBRARY_PATH": str(simrt / "engine")}

    def info(**extra: str) -> dict:
        proc = run_python("", args=["-m", "torch_fl", "info"], env={**env, **extra}, check=True)
        return json.loads(proc.stdout)

    bundled = info()
    assert bundled["device_count"] == 2
    assert bundled["device_note"] == f"runtime {package / 'cuda_assets' / 'libcudart.so.13'} (bundled)"
    # Disabled: an installed libcudart or none (which one is this machine's
    # business), never the simulated bundled one with its two devices.
    disabled = info(FLAGOS_DISABLE_CUDA_ASSETS="1")
    assert disabled["device_count"] == 0
    assert "cuda_assets" not in disabled["device_note"] and "(bundled)" not in disabled["device_note"]

    skipped = tmp_path / "skipped"
    pip_install(build_wheel("cuda", tmp_path / "dist_skip", {"FLAGOS_CUDA_ASSETS_DIR": str(sim_lib),
                                                            "FLAGOS_SKIP_CUDA_ASSETS": "1"}), skipped)
    assert not (skipped / "torch_fl_plugin_cuda" / "cuda_assets").exists()

