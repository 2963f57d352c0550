"""The cuda plugin (libflagos_cuda.so, plugins/cudalike with the CUDA table):
its packaging and how torch_fl treats it on a machine without a GPU; the
certification on a GPU is marked `gpu`. Its behaviour against a simulated
CUDA runtime is in test_cudalike_sim.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import exported_symbols, flagos_lines, run_python

SHOW = "import torch_fl, json; print(json.dumps(torch_fl.plugin_info()))"


def last_json(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def installed() -> dict[str, str]:
    """Plugin name -> library path, as the core discovers them."""
    code = "import torch_fl, json; print(json.dumps({c['name']: c['path'] for c in torch_fl.installed_plugins()}))"
    return last_json(run_python(code, env={"FLAGOS_PLUGIN": "host"}))


@pytest.fixture(scope="module")
def cuda_plugin(installed) -> Path:
    if "cuda" not in installed:
        pytest.skip("the cuda plugin was not built")
    return Path(installed["cuda"])


@pytest.fixture(scope="module")
def probe_answer(cuda_plugin) -> list[str]:
    """What flagos-cuda-probe, installed beside the plugin, prints here."""
    proc = subprocess.run([str(cuda_plugin.parent / "flagos-cuda-probe")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.fixture(scope="module")
def gpus(probe_answer) -> int:
    return int(next(line for line in probe_answer if line.startswith("devices ")).split()[1])


# The paths plugins/cuda/libflagos_cuda.toml names: one exists where a driver is.
DRIVER_PATHS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg")


@pytest.fixture(scope="module")
def driver() -> bool:
    return any(Path(p).exists() for p in DRIVER_PATHS)


@pytest.fixture
def no_gpu(gpus):
    if gpus > 0:
        pytest.skip(f"this machine has {gpus} CUDA device(s)")


@pytest.fixture
def gpu(gpus):
    if gpus == 0:
        pytest.skip("no CUDA device on this machine")


def test_exports_only_the_entry_symbol(cuda_plugin):
    assert exported_symbols(cuda_plugin) == ["flagos_plugin_get_api"]


def test_needs_only_libc(cuda_plugin):
    # Built against include/ alone: no torch, no core, its C++ runtime linked
    # in statically, and libcudart opened at first use rather than linked.
    out = subprocess.run(["readelf", "-d", str(cuda_plugin)], capture_output=True, text=True,
                         check=True).stdout
    needed = sorted(line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line)
    assert [n for n in needed if not n.startswith(("libc.so", "libm.so", "ld-linux"))] == [], needed


def test_probe_answers_in_its_format(probe_answer, gpus):
    assert probe_answer[0] == "flagos-cuda-probe 1"
    assert probe_answer[-1] == "end"
    assert sum(line.startswith("device ") for line in probe_answer) == gpus


def test_probe_says_why_it_found_no_device(probe_answer, no_gpu):
    # Either the runtime is missing (what was searched), or it is there and
    # the driver is not (what the runtime said).
    notes = [line for line in probe_answer if line.startswith("# ")]
    assert len(notes) == 1, probe_answer
    assert notes[0].startswith(("# cudaGetDeviceCount: cudaError", "# no libcudart.so.13 or libcudart.so.12 "
                                "found (searched ")), probe_answer


def test_explicit_cuda_without_a_device_activates_with_zero_devices(cuda_plugin, no_gpu):
    # Absence is not a plugin error: activation succeeds and reports no device.
    proc = run_python("", args=["-m", "torch_fl", "info"], env={"FLAGOS_PLUGIN": str(cuda_plugin)})
    info = json.loads(proc.stdout)
    assert (info["name"], info["origin"], info["device_count"]) == ("cuda", "explicit", 0)


def test_explicit_cuda_by_name_without_a_device_fails_the_import(cuda_plugin, no_gpu, driver):
    # Nothing could run on flagos: the import says so rather than every later call.
    proc = run_python("import torch_fl", env={"FLAGOS_PLUGIN": "cuda"})
    assert proc.returncode != 0
    why = "" if driver else f" (no NVIDIA driver (none of {', '.join(DRIVER_PATHS)} exists))"
    assert proc.stderr.splitlines()[-1] == (
        f"RuntimeError: [flagos] FLAGOS_PLUGIN=cuda: plugin 'cuda' ({cuda_plugin}) reports 0 devices{why}; "
        "unset FLAGOS_PLUGIN to use the host plugin (`python -m torch_fl info` describes the plugin)")


def test_without_a_driver_cuda_is_never_loaded_but_still_listed(cuda_plugin, driver):
    # Checked from the paths its requirements name, before loading anything.
    if driver:
        pytest.skip("this machine has an NVIDIA driver")
    reason = f"no NVIDIA driver (none of {', '.join(DRIVER_PATHS)} exists)"
    proc = run_python("""
        import json, torch_fl
        maps = open("/proc/self/maps").read()
        print(json.dumps([torch_fl.plugin_info()["selection"], "libflagos_cuda" in maps, "libcudart" in maps]))
    """)
    selection, plugin_loaded, runtime_loaded = last_json(proc)
    assert f"cuda: {reason}" in selection
    assert not plugin_loaded and not runtime_loaded
    listing = run_python("", args=["-m", "torch_fl", "plugins"], check=True).stdout.splitlines()
    cuda = next(line for line in listing if line.split()[0] == "cuda")
    assert cuda.endswith(f"{cuda_plugin}  (not loaded unless named: {reason})")


def test_implicit_cuda_without_a_device_falls_back_to_host(cuda_plugin, no_gpu):
    proc = run_python(SHOW)
    info = last_json(proc)
    assert info["name"] == "host"
    assert info["selection"].startswith("no accelerator plugin found a device (")
    assert "cuda: " in info["selection"] and info["selection"].endswith("); using the host plugin")
    assert flagos_lines(proc.stderr) == []


def test_counting_devices_keeps_the_driver_out_of_the_process(cuda_plugin, gpus):
    # The device list comes from the probe process, so that a process that
    # loaded the plugin and counted devices can still fork CUDA children: the
    # driver (libcuda) must not be loaded here. (Telling only where there is one.)
    code = f"""
        import ctypes, json
        lib = ctypes.CDLL({str(cuda_plugin)!r})
        class Host(ctypes.Structure):
            _fields_ = [("struct_size", ctypes.c_size_t), ("abi_major", ctypes.c_uint32),
                        ("abi_minor", ctypes.c_uint32), ("host_name", ctypes.c_char_p),
                        ("host_version", ctypes.c_char_p), ("num_options", ctypes.c_size_t),
                        ("option_keys", ctypes.c_void_p), ("option_values", ctypes.c_void_p)]
        host = Host(ctypes.sizeof(Host), 1, 0, b"test", b"0", 0, None, None)
        table = ctypes.c_void_p()
        assert lib.flagos_plugin_get_api(ctypes.byref(host), ctypes.byref(table)) == 0
        # device_count is the member after last_error_message (offset 40 + 8).
        fn = ctypes.c_void_p.from_address(table.value + 48).value
        count = ctypes.c_int32(-1)
        status = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_int32))(fn)(ctypes.byref(count))
        maps = open("/proc/self/maps").read()
        print(json.dumps([status, count.value, "libcuda.so" in maps]))
    """
    assert last_json(run_python(code)) == [0, gpus, False]


# ---- on a GPU ------------------------------------------------------------------


@pytest.mark.gpu
def test_conformance_on_the_gpu(tmp_path, cuda_plugin, gpu, gpus):
    report = tmp_path / "cuda-conformance.json"
    proc = run_python("", args=["-m", "torch_fl", "conformance", "cuda", "--json", str(report)])
    data = json.loads(report.read_text())
    failed = [(g["name"], c["name"], c["detail"]) for g in data["groups"] for c in g["checks"]
              if c["result"] == "fail"]
    assert proc.returncode == 0 and not failed, failed
    # Every check ran except those needing more devices (collectives: more
    # ranks than GPUs, which NCCL refuses to share), a capability this plugin
    # rightly lacks, or an option for a device-less run.
    allowed = ("needs 2 devices", "does not declare FLAGOS_CAP_HOST_ADDRESSABLE",
               "pass --option devices=0", "the communicator refuses ranks sharing one")
    skipped = [(c["name"], c["detail"]) for g in data["groups"] for c in g["checks"]
               if c["result"] == "skip" and not any(a in c["detail"] for a in allowed)]
    assert not skipped, skipped
    assert data["devices"] == gpus


@pytest.mark.gpu
def test_torch_fl_selects_cuda_on_the_gpu(cuda_plugin, gpu, gpus):
    proc = run_python(SHOW)
    info = last_json(proc)
    assert (info["name"], info["device_count"]) == ("cuda", gpus)
    assert not any("using the host plugin" in line for line in flagos_lines(proc.stderr))
