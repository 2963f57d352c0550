"""A vendor torch bundled into its plugin wheel (tools/plugin_wheel/vendor_torch.py)
and loaded before torch by the start-up hook (python/_torch_fl_bundle.py), with
the pairing checks around it: FLAGOS_PPU_MKL_DIR, FLAGOS_DCU_VENDOR_CORE,
FLAGOS_DCU_HIP_VERSION and FLAGOS_DCU_SKIP_RUNTIME_CHECK. The dcu tests are the
decoupled gates (DTK's device libraries on the official core) and one
legacy-mode smoke (FLAGOS_DCU_VENDOR_CORE=1), which
FLAGOS_DCU_SKIP_LEGACY_SMOKE=1 skips.

The vendor torch is made here: small device libraries compiled with the
system compiler that link the installed torch's libc10.so (as DTK's and PPU's
device libraries link their core) and, for ppu, an MKL library from a folder of
its own; the "vendor core" is a copy of the installed torch's libc10.so, so a
process that takes it instead of torch's own is visible in /proc/self/maps.
The plugins run on the simulated runtimes (test/simrt)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import ROOT, flagos_lines, run_python

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import environment  # noqa: E402
from tools.plugin_wheel import vendor_torch  # noqa: E402

TORCH_LIB = Path(torch.__file__).parent / "lib"
RELEASE = torch.__version__.split("+")[0]

# Prints where libc10.so, the device library and MKL were mapped from, and
# checks one op on the device against the CPU.
PROBE = """
import json, torch, torch_fl
maps = open("/proc/self/maps").read().split()
where = {n: sorted({p for p in maps if p.endswith("/" + n)}) for n in ("libc10.so", "libmkl_core.so", "DEVICE")}
x = torch.arange(6.0)
assert torch.equal((x.to("flagos") * 2).cpu(), x * 2)
print(json.dumps(where))
"""


def compile_library(path: Path, source: str, links: list[Path] = ()) -> None:
    c = path.with_suffix(".c")
    c.write_text(source)
    args = ["cc", "-shared", "-fPIC", "-o", str(path), str(c), f"-Wl,-soname,{path.name}", "-Wl,--no-as-needed"]
    for lib in links:
        args += [f"-L{lib.parent}", f"-l:{lib.name}"]
    subprocess.run(args, check=True)
    c.unlink()


def vendor_torch_dir(tmp: Path, device: str, version: str, hip: str | None = None,
                     mkl: Path | None = None) -> Path:
    """<tmp>/vendor/torch/lib with `device` (linking libc10.so, and MKL when
    given), a copy of libc10.so as the vendor core, and version.py."""
    lib = tmp / "vendor" / "torch" / "lib"
    lib.mkdir(parents=True)
    links = [TORCH_LIB / "libc10.so"] + ([mkl] if mkl else [])
    compile_library(lib / device, "int vendor_device_marker(void) { return 1; }\n", links)
    shutil.copy2(TORCH_LIB / "libc10.so", lib / "libc10.so")
    (lib.parent / "version.py").write_text(
        f"__version__ = '{version}'\nhip: Optional[str] = {repr(hip)}\n")
    return lib


def stage(tmp: Path, vendor: str, env: dict[str, str], monkeypatch) -> Path:
    """Bundles as the plugin wheel build does into <tmp>/site/torch_fl_plugin_<vendor>;
    returns the site folder."""
    package = tmp / "site" / f"torch_fl_plugin_{vendor}"
    package.mkdir(parents=True)
    shutil.copy2(ROOT / "plugins" / "cudalike" / "vendors" / f"{vendor}.toml", package / f"libflagos_{vendor}.toml")
    with monkeypatch.context() as build_env:  # the build's environment, not the tests' processes'
        for name in ("FLAGOS_VENDOR_TORCH_LIB", "FLAGOS_PPU_MKL_DIR", "FLAGOS_DCU_VENDOR_CORE"):
            build_env.delenv(name, raising=False)
        for name, value in env.items():
            build_env.setenv(name, value)
        vendor_torch.bundle(package, vendor)
    return tmp / "site"


def last_error(proc: subprocess.CompletedProcess) -> str:
    """The message of the exception a failed import ended with."""
    assert proc.returncode != 0, proc.stderr[-2000:]
    return proc.stderr.strip().splitlines()[-1].removeprefix("RuntimeError: ")


def mapped(proc: subprocess.CompletedProcess) -> dict[str, list[str]]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    where = json.loads(proc.stdout.strip().splitlines()[-1])
    return where


def probe(simrt: Path, vendor: str, site: Path, device: str, **extra: str) -> subprocess.CompletedProcess:
    return run_python(PROBE.replace("DEVICE", device),
                      env=environment(simrt, vendor, PYTHONPATH=str(site), **extra))


# ppu: the core goes too, with MKL from FLAGOS_PPU_MKL_DIR ----------------------

@pytest.fixture
def ppu_torch(tmp_path) -> tuple[Path, Path]:
    mkl = tmp_path / "mkl"
    mkl.mkdir()
    compile_library(mkl / "libmkl_core.so", "int mkl_marker(void) { return 2; }\n")
    return vendor_torch_dir(tmp_path, "libtorch_cuda.so", f"{RELEASE}+ppu", mkl=mkl / "libmkl_core.so"), mkl


def test_a_bundle_loads_at_the_first_import_of_torch_only(simrt, tmp_path, ppu_torch, monkeypatch):
    lib, mkl = ppu_torch
    site = stage(tmp_path, "ppu", {"FLAGOS_VENDOR_TORCH_LIB": str(lib), "FLAGOS_PPU_MKL_DIR": str(mkl)}, monkeypatch)
    count = "print(open('/proc/self/maps').read().count('/lib_ppu/libtorch_cuda.so') > 0)"
    env = environment(simrt, "ppu", PYTHONPATH=str(site))
    assert run_python(count, env=env, check=True).stdout.split() == ["False"]
    assert run_python("import torch; " + count, env=env, check=True).stdout.split() == ["True"]


def test_a_ppu_bundle_carries_the_core_and_mkl_and_torch_runs_on_them(simrt, tmp_path, ppu_torch, monkeypatch):
    lib, mkl = ppu_torch
    site = stage(tmp_path, "ppu", {"FLAGOS_VENDOR_TORCH_LIB": str(lib), "FLAGOS_PPU_MKL_DIR": str(mkl)}, monkeypatch)
    bundle = site / "torch_fl_plugin_ppu" / "lib_ppu"
    record = json.loads((bundle / "bundle.json").read_text())
    assert sorted(p.name for p in bundle.glob("*.so")) == ["libc10.so", "libmkl_core.so", "libtorch_cuda.so"]
    assert record["layout"] == "core" and record["torch_version"] == f"{RELEASE}+ppu"
    order = record["libraries"]
    assert order.index("libc10.so") < order.index("libtorch_cuda.so") > order.index("libmkl_core.so")
    assert record["sources"]["FLAGOS_PPU_MKL_DIR"] == str(mkl)

    where = mapped(probe(simrt, "ppu", site, "libtorch_cuda.so"))
    # torch's libtorch_cpu.so bound to the bundled core, not to its own libc10.so.
    assert where["libc10.so"] == [str(bundle / "libc10.so")]
    assert where["libmkl_core.so"] == [str(bundle / "libmkl_core.so")]
    assert where["libtorch_cuda.so"] == [str(bundle / "libtorch_cuda.so")]


def test_mkl_missing_from_the_ppu_mkl_dir_stops_the_bundle_naming_it(tmp_path, ppu_torch, monkeypatch):
    lib, _ = ppu_torch
    empty = tmp_path / "no_mkl"
    empty.mkdir()
    with pytest.raises(vendor_torch.BundleError) as err:
        stage(tmp_path, "ppu", {"FLAGOS_VENDOR_TORCH_LIB": str(lib), "FLAGOS_PPU_MKL_DIR": str(empty)}, monkeypatch)
    assert str(err.value) == (f"[flagos] plugin_wheel ppu: libtorch_cuda.so needs libmkl_core.so, which is not in "
                              f"FLAGOS_PPU_MKL_DIR={empty}")


def test_the_ppu_mkl_dir_defaults_to_usr_local_lib(tmp_path, ppu_torch, monkeypatch):
    lib, _ = ppu_torch
    if Path("/usr/local/lib/libmkl_core.so").exists():
        pytest.skip("this machine has MKL in /usr/local/lib")
    with pytest.raises(vendor_torch.BundleError, match=r"not in FLAGOS_PPU_MKL_DIR=/usr/local/lib$"):
        stage(tmp_path, "ppu", {"FLAGOS_VENDOR_TORCH_LIB": str(lib)}, monkeypatch)


# dcu: device libraries on the official core, unless FLAGOS_DCU_VENDOR_CORE=1 ---

@pytest.fixture
def dtk_torch(tmp_path) -> Path:
    return vendor_torch_dir(tmp_path, "libtorch_hip.so", f"{RELEASE}+das.opt1.dtk2604", hip="6.2.41134-dd7f9576")


# What a DTK torch's device libraries do as they load; Python stands in for
# them, so torch must not import torch_fl before it runs (NO_AUTOLOAD).
NO_AUTOLOAD = {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
REGISTER_CUDA_KERNEL = """
import torch
_lib = torch.library.Library("aten", "IMPL")
_lib.impl("add.Tensor", lambda a, b, alpha=1: a, "CUDA")
"""


def test_a_dcu_bundle_holds_device_libraries_on_the_installed_core(simrt, tmp_path, dtk_torch, monkeypatch):
    site = stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch)}, monkeypatch)
    bundle = site / "torch_fl_plugin_dcu" / "lib_dcu"
    record = json.loads((bundle / "bundle.json").read_text())
    assert [p.name for p in bundle.glob("*.so")] == ["libtorch_hip.so"]
    assert record["layout"] == "device" and record["from_installed_torch"] == ["libc10.so"]
    assert record["hip"] == "6.2.41134-dd7f9576"

    proc = run_python(REGISTER_CUDA_KERNEL + PROBE.replace("DEVICE", "libtorch_hip.so"),
                      env=environment(simrt, "dcu", PYTHONPATH=str(site), **NO_AUTOLOAD))
    where = mapped(proc)
    assert where["libc10.so"] == [str((TORCH_LIB / "libc10.so").resolve())]
    assert where["libtorch_hip.so"] == [str(bundle / "libtorch_hip.so")]


@pytest.fixture
def legacy_site(tmp_path, dtk_torch, monkeypatch) -> Path:
    """A dcu bundle built with FLAGOS_DCU_VENDOR_CORE=1: DTK's core goes too."""
    return stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch), "FLAGOS_DCU_VENDOR_CORE": "1"},
                 monkeypatch)


def test_dcu_vendor_core_selects_the_layout_and_must_match_at_start_up(simrt, legacy_site):
    bundle = legacy_site / "torch_fl_plugin_dcu" / "lib_dcu"
    assert sorted(p.name for p in bundle.glob("*.so")) == ["libc10.so", "libtorch_hip.so"]
    proc = run_python("import torch_fl", env=environment(simrt, "dcu", PYTHONPATH=str(legacy_site), **NO_AUTOLOAD))
    assert last_error(proc) == (
        f"[flagos] FLAGOS_DCU_VENDOR_CORE=0 at start-up, but {bundle} was built with FLAGOS_DCU_VENDOR_CORE=1 "
        f"(the vendor core); the two must match: export FLAGOS_DCU_VENDOR_CORE=1 or rebuild the plugin wheel")


@pytest.mark.skipif(os.environ.get("FLAGOS_DCU_SKIP_LEGACY_SMOKE", "").strip().lower() in ("1", "true", "on", "yes"),
                    reason="FLAGOS_DCU_SKIP_LEGACY_SMOKE=1: the legacy-mode (FLAGOS_DCU_VENDOR_CORE=1) smoke is skipped")
def test_legacy_mode_smoke_runs_torch_on_dtks_core(simrt, legacy_site):
    bundle = legacy_site / "torch_fl_plugin_dcu" / "lib_dcu"
    env = environment(simrt, "dcu", PYTHONPATH=str(legacy_site), FLAGOS_DCU_VENDOR_CORE="1", **NO_AUTOLOAD)
    proc = run_python(REGISTER_CUDA_KERNEL + PROBE.replace("DEVICE", "libtorch_hip.so"), env=env)
    assert mapped(proc)["libc10.so"] == [str(bundle / "libc10.so")]


def test_a_bundle_for_another_torch_release_is_refused_unless_checks_are_skipped(simrt, tmp_path, monkeypatch):
    lib = vendor_torch_dir(tmp_path, "libtorch_hip.so", "2.10.0+das.opt1.dtk2604", hip="6.2.41134")
    site = stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(lib)}, monkeypatch)
    bundle = site / "torch_fl_plugin_dcu" / "lib_dcu"
    env = environment(simrt, "dcu", PYTHONPATH=str(site))
    proc = run_python("import torch_fl", env=env)
    assert last_error(proc) == (
        f"[flagos] {bundle} holds dcu's torch 2.10.0+das.opt1.dtk2604, but torch {torch.__version__} is "
        f"installed; the release (2.10.0) must match (FLAGOS_DCU_SKIP_RUNTIME_CHECK=1 loads it anyway)")
    proc = run_python(PROBE.replace("DEVICE", "libtorch_hip.so"),
                      env={**env, "FLAGOS_DCU_SKIP_RUNTIME_CHECK": "1"})
    assert mapped(proc)["libtorch_hip.so"] == [str(bundle / "libtorch_hip.so")]
    assert any("loaded anyway (FLAGOS_DCU_SKIP_RUNTIME_CHECK=1)" in line for line in flagos_lines(proc.stderr))


def test_dtk_torch_must_match_the_hip_runtime_unless_overridden(simrt, tmp_path, dtk_torch, monkeypatch):
    site = stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch)}, monkeypatch)
    env = environment(simrt, "dcu", PYTHONPATH=str(site), SIMRT_HIP_VERSION="50702000",
                      **NO_AUTOLOAD)  # HIP 5.7
    proc = run_python(REGISTER_CUDA_KERNEL + "import torch_fl", env=env)
    assert last_error(proc) == (
        f"[flagos] dcu: DTK's torch {RELEASE}+das.opt1.dtk2604 bundled by torch_fl-plugin-dcu is built for HIP "
        f"6.2.41134-dd7f9576, but the HIP runtime is 5.7.2000 (hipRuntimeGetVersion in libgalaxyhip.so.5); "
        f"install the DTK that matches, or set FLAGOS_DCU_SKIP_RUNTIME_CHECK=1 to test the pair anyway")
    # The override stands in for detection.
    proc = run_python(REGISTER_CUDA_KERNEL + "import torch_fl", env={**env, "FLAGOS_DCU_HIP_VERSION": "6.2"})
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_dtk_torch_without_cuda_kernels_is_refused_unless_checks_are_skipped(simrt, tmp_path, dtk_torch,
                                                                             monkeypatch):
    site = stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch)}, monkeypatch)
    env = environment(simrt, "dcu", PYTHONPATH=str(site))
    proc = run_python("import torch_fl", env=env)
    assert "registered no kernel under the CUDA dispatch key (aten::add.Tensor)" in last_error(proc)
    proc = run_python("import torch_fl", env={**env, "FLAGOS_DCU_SKIP_RUNTIME_CHECK": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[flagos] FLAGOS_DCU_SKIP_RUNTIME_CHECK=1: DTK torch's HIP release and CUDA-key kernels are not checked" \
        in flagos_lines(proc.stderr)


def test_a_bundle_the_hook_did_not_load_fails_the_import(simrt, tmp_path, dtk_torch, monkeypatch):
    # The plugin with its bundle, but in a folder the start-up hook does not
    # search (not torch_fl_plugin_dcu/ on sys.path).
    site = stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch)}, monkeypatch)
    package = site / "elsewhere"
    (site / "torch_fl_plugin_dcu").rename(package)
    plugin = next((ROOT / "build").glob("*/out/plugins/dcu/libflagos_dcu.so"))
    shutil.copy2(plugin, package / plugin.name)
    shutil.copy2(plugin.parent / "flagos-dcu-probe", package / "flagos-dcu-probe")
    proc = run_python("import torch_fl", env=environment(simrt, "dcu", FLAGOS_PLUGIN=str(package / plugin.name)))
    assert last_error(proc) == (
        f"[flagos] {package / 'lib_dcu'} holds dcu's torch, but it was not loaded before torch: torch_fl's "
        f"start-up hook looks for torch_fl_plugin_dcu/lib_dcu/ on sys.path, where a pip-installed plugin wheel puts it")


def test_flagos_plugin_naming_another_plugin_leaves_the_bundle_alone(simrt, tmp_path, dtk_torch, monkeypatch):
    site = stage(tmp_path, "dcu", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch)}, monkeypatch)
    proc = run_python(PROBE.replace("DEVICE", "libtorch_hip.so"), env=environment(simrt, "musa", PYTHONPATH=str(site)))
    assert mapped(proc)["libtorch_hip.so"] == []


def test_without_the_vendor_torch_lib_nothing_is_bundled(tmp_path, monkeypatch, capsys):
    site = stage(tmp_path, "dcu", {}, monkeypatch)
    assert not (site / "torch_fl_plugin_dcu" / "lib_dcu").exists()
    assert "FLAGOS_VENDOR_TORCH_LIB is unset: no lib_dcu/ bundle" in capsys.readouterr().err


def test_the_dcu_plugin_wheel_carries_the_bundle_and_loads_it_when_installed(simrt, tmp_path, dtk_torch):
    from test_plugin_wheel import build_wheel, pip_install

    wheel = build_wheel("dcu", tmp_path / "dist", {"FLAGOS_VENDOR_TORCH_LIB": str(dtk_torch)})
    site = tmp_path / "installed"
    pip_install(wheel, site)
    bundle = site / "torch_fl_plugin_dcu" / "lib_dcu"
    assert sorted(p.name for p in bundle.iterdir()) == ["bundle.json", "libtorch_hip.so"]
    proc = run_python(REGISTER_CUDA_KERNEL + PROBE.replace("DEVICE", "libtorch_hip.so"),
                      env=environment(simrt, "dcu", PYTHONPATH=str(site), **NO_AUTOLOAD))
    assert mapped(proc)["libtorch_hip.so"] == [str(bundle / "libtorch_hip.so")]
    # doctor says what the start-up hook did.
    proc = run_python("", args=["-m", "torch_fl", "doctor"],
                      env=environment(simrt, "dcu", PYTHONPATH=str(site), FLAGOS_DCU_SKIP_RUNTIME_CHECK="1"))
    assert (f"vendor torch {bundle}: loaded before torch: libc10.so, libtorch_hip.so (device layout, dcu's "
            f"torch {RELEASE}+das.opt1.dtk2604)") in " ".join(proc.stdout.split()), proc.stdout
