"""The CUDA-shaped vendors' environment surface (docs/environment-variables.md),
on the simulated runtimes (test/simrt): FLAGOS_VENDOR_TORCH_LIB,
FLAGOS_METAX_CUDART_SHIM, FLAGOS_METAX_COMPAT, FLAGOS_DCU_VENDOR_CORE and
TORCH_DEVICE_BACKEND_AUTOLOAD on MUSA. Simulated-runtime results, not
hardware results."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conftest import ROOT, flagos_lines, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import SDK_VARS, VENDORS, environment  # noqa: E402


def copy_of_runtime(simrt: Path, vendor: str, tmp_path: Path) -> Path:
    """A second copy of `vendor`'s simulated runtime (with the engine it finds
    through its RUNPATH), standing in for a vendor torch's lib folder; returns
    the folder holding the runtime library."""
    _, folder, library = VENDORS[vendor]
    shutil.copytree(simrt / folder, tmp_path / folder)
    shutil.copytree(simrt / "engine", tmp_path / "engine")
    return (tmp_path / folder / library).parent


def device_note(env: dict[str, str]) -> str:
    return json.loads(run_python("", args=["-m", "torch_fl", "info"], env=env, check=True).stdout)["device_note"]


# FLAGOS_VENDOR_TORCH_LIB ---------------------------------------------------

@pytest.mark.parametrize("vendor", ["metax", "dcu", "ppu"])
def test_vendor_torch_lib_is_searched_before_the_sdk(vendor, simrt, tmp_path):
    # The SDK variable points at one copy, the variable at another: the
    # plugin opens the vendor torch's copy, and says so.
    torch_lib = copy_of_runtime(simrt, vendor, tmp_path)
    note = device_note(environment(simrt, vendor, FLAGOS_VENDOR_TORCH_LIB=str(torch_lib)))
    assert note.startswith(f"runtime {torch_lib}/") and note.endswith("(FLAGOS_VENDOR_TORCH_LIB)"), note


def test_vendor_torch_lib_is_not_read_by_cuda_or_musa(simrt, tmp_path):
    torch_lib = copy_of_runtime(simrt, "musa", tmp_path)
    note = device_note(environment(simrt, "musa", FLAGOS_VENDOR_TORCH_LIB=str(torch_lib)))
    assert str(simrt / "musa") in note and str(tmp_path) not in note, note


def test_without_the_variable_the_note_names_the_sdk_copy(simrt):
    note = device_note(environment(simrt, "metax"))
    assert note == f"runtime {simrt / 'metax' / VENDORS['metax'][2]} (folder)", note


def test_a_vendor_torch_lib_without_the_runtime_is_named_in_what_was_searched(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in SDK_VARS}
    env.pop("FLAGOS_PLUGIN", None)
    env["FLAGOS_VENDOR_TORCH_LIB"] = str(tmp_path)
    listing = run_python("", args=["-m", "torch_fl", "plugins"], env=env, check=True).stdout.splitlines()
    for vendor in ("metax", "dcu"):
        line = next(x for x in listing if x.split()[0] == vendor)
        assert f"found (searched {tmp_path}, " in line, line


# FLAGOS_METAX_CUDART_SHIM ----------------------------------------------------

# Runs before anything imports torch: which libcudart.so.12 is mapped, and
# what a call tagged with its version reaches (the bridge's device count).
PROBE_SHIM = """
    import ctypes, json, sys
    mapped = [line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith("libcudart.so.12")]
    count = None
    if mapped:
        libc = ctypes.CDLL(None)
        libc.dlvsym.restype = ctypes.c_void_p
        libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        fn = libc.dlvsym(None, b"cudaGetDeviceCount", b"libcudart.so.12")
        n = ctypes.c_int(-1)
        rc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))(fn)(ctypes.byref(n))
        count = (rc, n.value)
    before_torch = "torch" not in sys.modules
    import torch, torch_fl
    print(json.dumps([sorted(set(mapped)), count, before_torch, (torch.ones(3, device="flagos") * 2).sum().item()]))
"""


def test_the_cudart_shim_is_loaded_before_torch_and_forwards_to_macas_bridge(simrt):
    env = environment(simrt, "metax", FLAGOS_METAX_CUDART_SHIM="1", SIMRT_DEVICES="3")
    mapped, count, before_torch, total = json.loads(run_python(PROBE_SHIM, env=env, check=True).stdout.splitlines()[-1])
    assert len(mapped) == 1 and mapped[0].endswith("/torch_fl/plugins/metax/cudart_shim/libcudart.so.12"), mapped
    assert before_torch and count == [0, 3] and total == 6.0  # cudaGetDeviceCount@libcudart.so.12 -> the bridge


def test_without_the_switch_no_cudart_shim_is_loaded(simrt):
    mapped, count, _, _ = json.loads(run_python(PROBE_SHIM, env=environment(simrt, "metax"),
                                                check=True).stdout.splitlines()[-1])
    assert (mapped, count) == ([], None)


def test_the_shim_exports_cudart_names_tagged_libcudart_so_12():
    from conftest import exported_symbols

    shim = next(ROOT.glob("build/*/out/plugins/metax/cudart_shim/libcudart.so.12"))
    names = exported_symbols(shim)
    assert "cudaMalloc@@libcudart.so.12" in names and "cudaGetDeviceProperties_v2@@libcudart.so.12" in names
    assert all(n.endswith("@@libcudart.so.12") or n == "libcudart.so.12" for n in names), names


def test_the_shim_answers_not_supported_for_what_the_bridge_lacks(simrt):
    # The bridge has no cudaGetDeviceProperties_v2 (MACA's documented gap).
    proc = run_python("""
        import ctypes
        libc = ctypes.CDLL(None)
        libc.dlvsym.restype = ctypes.c_void_p
        libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        fn = libc.dlvsym(None, b"cudaGetDeviceProperties_v2", b"libcudart.so.12")
        print(ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(fn)(None, 0))
    """, env=environment(simrt, "metax", FLAGOS_METAX_CUDART_SHIM="1"), check=True)
    assert proc.stdout.split() == ["801"]  # cudaErrorNotSupported


def test_a_shim_switch_set_after_start_up_is_reported(simrt):
    proc = run_python("""
        import os
        os.environ["FLAGOS_METAX_CUDART_SHIM"] = "1"
        import torch_fl
    """, env=environment(simrt, "metax"), check=True)
    lines = [x for x in flagos_lines(proc.stderr) if "FLAGOS_METAX_CUDART_SHIM" in x]
    assert len(lines) == 1 and "not set when the interpreter started" in lines[0], proc.stderr


def test_the_start_up_hook_reads_booleans_as_the_registry_does(simrt):
    proc = run_python("""
        import os, json, _torch_fl_startup as hook, torch_fl
        values = ["1", "true", "ON", "Yes", "0", "false", "off", "No", "", " 1 ", "2", "enabled"]
        out = []
        for v in values:
            os.environ["FLAGOS_METAX_CUDART_SHIM"] = v
            out.append([v, hook.switched_on("FLAGOS_METAX_CUDART_SHIM"), bool(torch_fl._env.get("FLAGOS_METAX_CUDART_SHIM"))])
        print(json.dumps(out))
    """, env=environment(simrt, "metax"), check=True)
    rows = json.loads(proc.stdout.splitlines()[-1])
    assert all(hook == registry for _, hook, registry in rows), rows


# TORCH_DEVICE_BACKEND_AUTOLOAD on MUSA ---------------------------------------

@pytest.fixture
def claiming_backend(tmp_path) -> tuple[Path, Path]:
    """An installed torch device-backend package (as torch_musa is) that claims
    PrivateUse1 when torch autoloads it; its marker file says it ran."""
    (tmp_path / "claimer.py").write_text(
        "import os, pathlib\n"
        "def autoload():\n"
        "    pathlib.Path(os.environ['CLAIMER_MARKER']).write_text('ran')\n"
        "    import torch\n"
        "    torch.utils.rename_privateuse1_backend('musa')\n")
    dist = tmp_path / "claimer-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: claimer\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[torch.backends]\nclaimer = claimer:autoload\n")
    return tmp_path, tmp_path / "marker"


AUTOLOAD_PROBE = """
    import os
    seen = os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD")
    import torch, torch_fl
    print(seen, (torch.ones(2, device="flagos") + 1).sum().item())
"""


def test_the_musa_plugin_keeps_torch_from_autoloading_a_backend(simrt, claiming_backend):
    path, marker = claiming_backend
    env = environment(simrt, "musa", PYTHONPATH=str(path), CLAIMER_MARKER=str(marker))
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    assert run_python(AUTOLOAD_PROBE, env=env, check=True).stdout.split() == ["0", "4.0"]
    assert not marker.exists()


def test_an_explicit_autoload_export_wins(simrt, claiming_backend):
    path, marker = claiming_backend
    env = environment(simrt, "musa", PYTHONPATH=str(path), CLAIMER_MARKER=str(marker),
                      TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    proc = run_python(AUTOLOAD_PROBE, env=env)
    assert marker.exists() and proc.returncode != 0  # the backend claimed PrivateUse1 first
    # torch's autoload reports torch_fl's failure with the cause above it
    assert "PrivateUse1 is already registered as 'musa'" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("vendor", ["metax", "dcu", "ppu", "cuda"])
def test_other_plugins_leave_autoload_alone(vendor, simrt):
    env = environment(simrt, vendor)
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    proc = run_python("import os; print(os.environ.get('TORCH_DEVICE_BACKEND_AUTOLOAD'))", env=env, check=True)
    assert proc.stdout.split() == ["None"]


# FLAGOS_METAX_COMPAT ---------------------------------------------------------

CUDA_QUERIES = """
    import json, torch, torch_fl
    p = torch.cuda.get_device_properties("cuda:1")
    print(json.dumps([torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(1),
                      p.total_memory, p.multi_processor_count, torch.cuda.get_device_capability(torch.device("cuda", 0))]))
"""


def test_metax_compat_answers_torch_cuda_device_queries_from_flagos(simrt):
    env = environment(simrt, "metax", FLAGOS_METAX_COMPAT="1", SIMRT_NAME="MetaX Sim", SIMRT_MEMORY_MB="512")
    out = json.loads(run_python(CUDA_QUERIES, env=env, check=True).stdout.splitlines()[-1])
    assert out == [True, 2, "MetaX Sim", 512 << 20, 104, [8, 0]], out


def test_without_metax_compat_torch_cuda_is_untouched(simrt):
    # (the general torch.cuda shim, on by default, is off here: docs/compat.md)
    proc = run_python("import torch, torch_fl; print(torch.cuda.device_count(), torch.cuda.is_available())",
                      env=environment(simrt, "metax", FLAGOS_DISABLE_CUDA_SHIM="1"), check=True)
    assert proc.stdout.split() == ["0", "False"]  # this torch is a CPU build


def test_metax_compat_on_another_plugin_says_so_and_changes_nothing(simrt):
    proc = run_python("import torch, torch_fl; print(torch.cuda.device_count())",
                      env=environment(simrt, "musa", FLAGOS_METAX_COMPAT="1", FLAGOS_DISABLE_CUDA_SHIM="1"),
                      check=True)
    lines = [x for x in flagos_lines(proc.stderr) if "FLAGOS_METAX_COMPAT" in x]
    assert proc.stdout.split() == ["0"] and len(lines) == 1 and "active plugin is musa" in lines[0], proc.stderr


# FLAGOS_DCU_VENDOR_CORE ------------------------------------------------------

def test_dcu_vendor_core_must_match_the_build(simrt):
    proc = run_python("import torch_fl", env=environment(simrt, "dcu", FLAGOS_DCU_VENDOR_CORE="1"))
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode != 0
    assert "FLAGOS_DCU_VENDOR_CORE=1 at import, but this torch_fl was built with FLAGOS_DCU_VENDOR_CORE=0" in last
    run_python("import torch_fl", env=environment(simrt, "dcu", FLAGOS_DCU_VENDOR_CORE="0"), check=True)


def test_dcu_vendor_core_is_not_checked_for_other_plugins(simrt):
    run_python("import torch_fl", env=environment(simrt, "musa", FLAGOS_DCU_VENDOR_CORE="1"), check=True)
