"""The CUDA-shaped plugins (cuda, ppu, metax, dcu, musa: plugins/cudalike)
against their simulated runtimes (test/simrt): each vendor's library, with
its real soname and symbol names, over host memory, enforcing the vendor's
documented rules. Simulated-runtime results, not hardware results. The
torch-level suites on each simulated runtime run from test/run_all.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import SDK_VARS, VENDORS, environment  # noqa: E402


def conformance(env: dict[str, str], plugin: str, tmp_path: Path) -> tuple[int, dict, str]:
    report = tmp_path / "report.json"
    # The runner takes plugin options as arguments, never from FLAGOS_PLUGIN_OPTIONS (bpu's runtime=).
    options = [arg for opt in env.get("FLAGOS_PLUGIN_OPTIONS", "").split(",") if opt for arg in ("--option", opt)]
    proc = run_python("", args=["-m", "torch_fl", "conformance", plugin, "--json", str(report), *options], env=env)
    return proc.returncode, json.loads(report.read_text()), proc.stdout + proc.stderr


def checks(report: dict, result: str) -> list[tuple[str, str, str]]:
    return [(g["name"], c["name"], c["detail"]) for g in report["groups"] for c in g["checks"]
            if c["result"] == result]


# The communicator library each vendor table names first (vendors/<name>.cpp).
COMM_LIBRARY = {"cuda": "no libnccl.so.2 found", "ppu": "no libnccl.so.2 found", "dcu": "no librccl.so.1 or",
                "metax": "no libmccl.so found", "musa": "no libmccl.so or libmccl.so.2 found",
                # None: no NCCL-shaped library at all (HCCL is not), so the extension is left out.
                "ascend": None,
                # None: TCCL, the Kuiper SDK's collectives, is not wired to this layer.
                "tsingmicro": None,
                # None: the BPU runs compiled models; it has no communicator library.
                "bpu": None,
                # None: ECCL, Enflame's collectives, is not wired to this layer.
                "gcu": None}
NO_COMM = "the plugin does not provide the collectives extension"

# The vendors whose table names an activity tracer (CUPTI, MUPTI): their
# simulated SDK has one (test/simrt/activity), so the profiler group runs;
# the others leave the extension out.
TRACER = {"cuda", "ppu", "musa"}
NO_PROFILER = "the plugin does not provide the profiler extension"
NO_MEMORY_RECORDS = "the plugin does not record memory"

# The simulated runtimes have 2 devices (SIMRT_DEVICES); all BPU cores are one device.
DEVICES = {"bpu": 1}
# What a vendor lacks, and the checks that need it: bpu has no page-locked
# memory, one device (no peers, nothing per-device to tell apart), and no
# streams, so nothing is ever pending for the testing extension to delay.
VENDOR_SKIPS = {"bpu": ("does not declare FLAGOS_CAP_PINNED_HOST", "needs 2 devices, the plugin reports 1",
                        "the plugin does not provide the testing extension")}

# Guard pages for every vendor; plain memory once (the same code otherwise).
CONFORMANCE_RUNS = [(vendor, True) for vendor in VENDORS] + [("cuda", False)]


@pytest.mark.parametrize("vendor,guard", CONFORMANCE_RUNS,
                         ids=[f"{v}-{'guard_pages' if g else 'plain'}" for v, g in CONFORMANCE_RUNS])
def test_conformance_passes_every_group(vendor, guard, simrt, tmp_path):
    # Guard pages: device memory is PROT_NONE to everything but the simulated
    # runtime, so a plugin that dereferenced a device pointer would crash.
    env = environment(simrt, vendor, **({"SIMRT_GUARD": "1"} if guard else {}))
    rc, report, output = conformance(env, vendor, tmp_path)
    assert rc == 0 and not checks(report, "fail"), checks(report, "fail") or output[-3000:]
    assert report["devices"] == DEVICES.get(vendor, 2)
    # Every check ran but those for host-addressable memory, device-less runs,
    # the collectives extension, whose library (NCCL, RCCL, MCCL) has no
    # simulated twin: each of its checks says which library was searched where,
    # graphs and IPC, which the simulated runtimes do not export, and the profiler
    # extension where the vendor has no tracer (with one, only its memory
    # records: device memory is the core allocator's to report).
    allowed = ("does not declare FLAGOS_CAP_HOST_ADDRESSABLE", "pass --option devices=0",
               "communicator library is unavailable", "no graph capture",
               "device memory cannot be shared between processes")
    allowed += (NO_MEMORY_RECORDS,) if vendor in TRACER else (NO_PROFILER,)
    allowed += (NO_COMM,) if COMM_LIBRARY[vendor] is None else ()
    allowed += VENDOR_SKIPS.get(vendor, ())
    assert [c for c in checks(report, "skip") if not any(a in c[2] for a in allowed)] == []
    profiler = [c for c in checks(report, "pass") if c[0] == "profiler"]
    assert len(profiler) == (5 if vendor in TRACER else 0), profiler
    collectives = [c for c in checks(report, "skip") if c[0] == "collectives"]
    want = COMM_LIBRARY[vendor] or NO_COMM
    assert len(collectives) == 11 and all(want in c[2] for c in collectives), collectives


BPU_DIRTY_RULE = "hbUCPMemFlush: INVALIDATE over CPU writes that were never CLEANed discards them"

# Plugins built from the real runtime layer with one wrong table value each
# (test/fake_plugins): the fixture, its simulated runtime, and the rule text
# the runtime answers with (test/simrt/README.md, "Rules enforced").
BROKEN_TABLES = [
    # Host-to-device and device-to-host copy kinds swapped (the rule text goes
    # on to name the pointer).
    ("musa_swapped_kinds", "musa", "musaMemcpyAsync: kind 2 needs a device src"),
    # musaEventInterprocess in place of musaEventDisableTiming.
    ("musa_interprocess_events", "musa",
     "musaEventCreateWithFlags: flags 0x4: Interprocess (0x4) needs DisableTiming (0x2)"),
    # CUDA's cudaHostAllocPortable passed to mcMallocHost.
    ("metax_portable_host_alloc", "metax", "mcMallocHost: flags 0x1 are not valid pinned-allocation flags (mask 0x0)"),
    # hipStreamNonBlocking and hipEventDisableTiming swapped.
    ("dcu_swapped_stream_event_flags", "dcu",
     "hipStreamCreateWithPriority: flags 0x2 are not valid stream flags (mask 0x1)"),
    # ACL's destMax passed as count - 1.
    ("ascend_short_dest_max", "ascend", "aclrtMemcpyAsync: destMax ("),
    # Unaligned on-chip D2D copies handed to aclrtMemcpyAsync unstaged.
    ("ascend_unstaged_d2d", "ascend",
     "aclrtMemcpyAsync: on-chip device-to-device copies need 64-byte aligned src and dst"),
    # Every event created without ACL_EVENT_TIME_LINE.
    ("ascend_untimed_events", "ascend",
     "aclrtEventElapsedTime: both events must be created with ACL_EVENT_TIME_LINE to be timed"),
    # aclInit called only where devices are counted (the probe's process).
    ("ascend_no_acl_init", "ascend", "aclrtGetDevice: aclInit must be called before any other AscendCL call"),
    # Host-to-device copies sent as txMemcpyHostToHost, which txMemcpyAsync rejects.
    ("tsingmicro_h2d_as_host_to_host", "tsingmicro",
     "txMemcpyAsync: host-to-host copies (txMemcpyHostToHost, kind 0) are rejected"),
    # Device-to-device copies sent as CUDA's cudaMemcpyDefault (4).
    ("tsingmicro_cuda_default_kind", "tsingmicro", "txMemcpyAsync: kind 4 is not a txMemcpyKind (0..3)"),
    # No CLEAN after the CPU writes device memory: the next INVALIDATE would discard the writes.
    ("bpu_skips_clean", "bpu", BPU_DIRTY_RULE),
    # A third-party stub's flush flags (CLEAN = 1, INVALIDATE = 2): every "CLEAN" discards the writes.
    ("bpu_stub_flag_values", "bpu", BPU_DIRTY_RULE),
]


@pytest.mark.parametrize("fixture,vendor,rule", BROKEN_TABLES, ids=[f for f, _, _ in BROKEN_TABLES])
def test_a_wrong_table_value_fails_conformance_naming_the_rule(fixture, vendor, rule, simrt, test_plugin_dir,
                                                               tmp_path):
    lib = test_plugin_dir / fixture / f"libflagos_{fixture}.so"
    rc, report, output = conformance(environment(simrt, vendor), str(lib), tmp_path)
    failed = checks(report, "fail")
    assert rc != 0 and failed
    assert any(rule in detail for _, _, detail in failed), failed
    assert any(line.startswith(f"[simrt] {rule}") for line in output.splitlines()), output[-3000:]


# Fixtures whose layer makes one wrong runtime call (test/fake_plugins/
# broken_layer.h): the fixture, its simulated runtime, a failed check that
# must name the defect, and the [simrt] rule line, where the runtime has one.
BROKEN_LAYERS = [
    # The pointer rule: hipFree of a pointer 256 bytes into the allocation.
    ("dcu_frees_interior_pointer", "dcu", ("memory", "alloc-1B", "mem_free returned INVALID_ARGUMENT"),
     "is not the start of a live device allocation"),
    # The device rule: a copy between devices sent as a one-device copy.
    ("musa_peer_copy_as_local", "musa", ("copies", "peer-copy", "cross-device copies need musaMemcpyPeerAsync"),
     "musaMemcpyAsync: pointer of device 0 used on a stream of device 1"),
    # The stream rule: cudaStreamWaitEvent dropped. No call is wrong, so no
    # rule line: the ordering check finds the waiting stream ran early.
    ("cuda_skips_stream_wait", "cuda", ("streams", "wait-event-orders-streams", "B did not see A's data"), None),
]


@pytest.mark.parametrize("fixture,vendor,check,rule", BROKEN_LAYERS, ids=[f for f, _, _, _ in BROKEN_LAYERS])
def test_a_wrong_runtime_call_in_the_layer_fails_conformance(fixture, vendor, check, rule, simrt, test_plugin_dir,
                                                             tmp_path):
    lib = test_plugin_dir / fixture / f"libflagos_{fixture}.so"
    rc, report, output = conformance(environment(simrt, vendor), str(lib), tmp_path)
    group, name, detail = check
    failed = checks(report, "fail")
    assert rc != 0 and any(g == group and n == name and detail in d for g, n, d in failed), failed
    simrt_lines = [line for line in output.splitlines() if line.startswith("[simrt]")]
    if rule is None:
        assert simrt_lines == [], simrt_lines
    else:
        assert any(rule in line for line in simrt_lines), output[-3000:]


def test_a_gcu_table_asking_for_stream_priorities_names_the_missing_call(simrt, test_plugin_dir):
    # TopsRider exports no priority calls (the simulated libtopsrt.so hides
    # them): a table without the adapter that avoids them refuses the runtime.
    lib = test_plugin_dir / "gcu_priority_streams" / "libflagos_gcu_priority_streams.so"
    proc = run_python("import torch_fl", env=environment(simrt, "gcu", FLAGOS_PLUGIN=str(lib)))
    assert proc.returncode != 0
    assert "has no topsStreamCreateWithPriority" in proc.stderr, proc.stderr[-2000:]


def test_a_bpu_read_without_invalidate_gets_stale_data_and_the_rule(simrt, test_plugin_dir, tmp_path):
    # A read breaks no call's argument: the simulated libhbucp.so catches the
    # access to a block the device owns, names the rule, and serves stale
    # bytes, which the copy checks then find.
    lib = test_plugin_dir / "bpu_skips_invalidate" / "libflagos_bpu_skips_invalidate.so"
    rc, report, output = conformance(environment(simrt, "bpu"), str(lib), tmp_path)
    failed = checks(report, "fail")
    assert rc != 0 and any("round trip" in detail and "0xa5" in detail for _, _, detail in failed), failed
    rule = "hbUCPMemFlush: the CPU accessed a block the device owns with no INVALIDATE since its last CLEAN"
    assert any(line.startswith(f"[simrt] {rule}") for line in output.splitlines()), output[-3000:]


def probe(executable: Path, env: dict[str, str]) -> tuple[list[list[str]], str]:
    """The device lines the plugin's probe prints (device_table.h), split, and its stderr."""
    proc = subprocess.run([str(executable)], env=env, capture_output=True, text=True, timeout=60, check=True)
    return [line.split() for line in proc.stdout.splitlines() if line.startswith("device ")], proc.stderr


def test_cuda_attribute_ids_on_metax_are_refused_naming_the_rule(simrt, test_plugin_dir):
    # The plugin reads a refused attribute as 0, so conformance still passes:
    # the probe, which enumerates the devices, shows what the runtime said.
    env = environment(simrt, "metax")
    real, real_err = probe(test_plugin_dir.parent / "plugins" / "metax" / "flagos-metax-probe", env)
    broken, broken_err = probe(test_plugin_dir / "metax_cuda_attributes" / "flagos-metax_cuda_attributes-probe", env)
    # device <i> <cc major> <cc minor> <SMs> <memory> <pci domain> <pci bus> ...
    assert [d[2:4] + d[7:8] for d in real] == [["8", "0", "16"], ["8", "0", "17"]] and "[simrt]" not in real_err
    assert [d[2:4] + d[7:8] for d in broken] == [["0", "0", "0"], ["0", "0", "0"]]
    assert "[simrt] mcDeviceGetAttribute: attribute 75 is not one the simulator answers" in broken_err.splitlines()


@pytest.mark.parametrize("vendor", VENDORS)
def test_without_its_runtime_it_is_listed_with_what_was_searched(vendor):
    env = {k: v for k, v in os.environ.items() if k not in SDK_VARS}
    env.pop("FLAGOS_PLUGIN", None)
    listing = run_python("", args=["-m", "torch_fl", "plugins"], env=env, check=True).stdout.splitlines()
    line = next(x for x in listing if x.split()[0] == vendor)
    if vendor == "cuda" and "not loaded unless named" in line:
        return  # no NVIDIA driver here: its requirements keep it unloaded (test_cuda_plugin.py)
    if vendor == "ppu":
        assert line.endswith("(0 devices: PPU_SDK is not set (the PPU SDK))"), line
    else:
        assert "(0 devices: " in line and " found (searched " in line, line


@pytest.mark.parametrize("vendor", ["metax", "dcu"])
def test_an_explicit_plugin_without_its_runtime_fails_the_import_saying_why(vendor):
    env = {k: v for k, v in os.environ.items() if k not in SDK_VARS}
    proc = run_python("import torch_fl", env={**env, "FLAGOS_PLUGIN": vendor})
    assert proc.returncode != 0
    last = proc.stderr.splitlines()[-1]
    assert f"FLAGOS_PLUGIN={vendor}: plugin '{vendor}'" in last and "reports 0 devices (no " in last, last


def test_runtime_option_names_the_library_instead_of_searching(simrt):
    # No SDK variable at all: the option alone finds the runtime.
    lib = simrt / "musa" / VENDORS["musa"][2]
    env = {k: v for k, v in os.environ.items() if k not in SDK_VARS}
    env.update(FLAGOS_PLUGIN="musa", FLAGOS_PLUGIN_OPTIONS=f"runtime={lib}")
    info = json.loads(run_python("", args=["-m", "torch_fl", "info"], env=env, check=True).stdout)
    assert (info["name"], info["device_count"]) == ("musa", 2)


def test_a_relative_runtime_option_is_refused_in_one_line(simrt):
    env = environment(simrt, "musa", FLAGOS_PLUGIN_OPTIONS="runtime=libmusart.so")
    proc = run_python("import torch_fl", env=env)
    assert proc.returncode != 0
    assert "option runtime=libmusart.so is not an absolute path to a library" in proc.stderr.splitlines()[-1]


def test_ppu_searches_only_its_sdk(simrt):
    # NVIDIA's libcudart has PPU's soname: with CUDA's simulated runtime
    # reachable but PPU_SDK unset, ppu still finds nothing.
    env = environment(simrt, "cuda")
    env.pop("FLAGOS_PLUGIN")
    listing = run_python("", args=["-m", "torch_fl", "plugins"], env=env, check=True).stdout.splitlines()
    assert next(x for x in listing if x.split()[0] == "ppu").endswith("(0 devices: PPU_SDK is not set (the PPU SDK))")


@pytest.mark.parametrize("vendor", VENDORS)
def test_devices_and_properties_come_from_scalar_getters(vendor, simrt):
    last = DEVICES.get(vendor, 2) - 1
    proc = run_python(f"""
        import json, torch, torch_fl
        p = torch_fl.flagos.get_device_properties({last})
        x = torch.arange(6.0, device="flagos:{last}").reshape(2, 3)
        print(json.dumps([torch_fl.flagos.device_count(), p.name, p.total_memory, p.capabilities,
                          (x * 2).sum().item(), str((x + 1).device)]))
    """, env=environment(simrt, vendor, SIMRT_NAME="Sim Device", SIMRT_MEMORY_MB="512"), check=True)
    count, name, total, caps, total_sum, device = json.loads(proc.stdout.strip().splitlines()[-1])
    # TsingMicro names a device only inside a properties struct: the plugin gives a generic name.
    want, memory = ("TsingMicro TX8 device 1" if vendor == "tsingmicro" else "Sim Device"), 512 << 20
    if vendor == "bpu":  # no name call, and no memory call: the machine's physical memory
        want, memory = "Horizon Robotics BPU device 0", os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert (count, name, total, total_sum, device) == (last + 1, want, memory, 30.0, f"flagos:{last}")
    # Device memory is never host-addressable: the core's real copy paths run.
    assert "host_addressable" not in caps and "event_timing" in caps
    assert ("pinned_host" in caps) == (vendor != "bpu")
    assert ("cuda_abi" in caps) == (vendor in ("cuda", "ppu"))


def test_without_page_locked_memory_pin_requests_get_ordinary_memory(simrt):
    # torch asks for pinned memory on every non_blocking device-to-host copy
    # and for DataLoader(pin_memory=True); bpu has none, so those get
    # ordinary memory (not pinned) and the copies complete as they return.
    code = """
        import json, torch, torch_fl
        z = torch.arange(6.0, device="flagos")
        h = z.to("cpu", non_blocking=True)
        data = torch.utils.data.TensorDataset(torch.arange(6.0))
        batch = next(iter(torch.utils.data.DataLoader(data, batch_size=3, pin_memory=True)))[0]
        print(json.dumps([h.tolist(), h.is_pinned(), torch.empty(2, pin_memory=True).is_pinned(), batch.tolist()]))
    """
    proc = run_python(code, env=environment(simrt, "bpu", SIMRT_GUARD="1"), check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], False, False,
                                                                [0.0, 1.0, 2.0]]


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_demo_trains_as_on_the_cpu(vendor, simrt):
    proc = run_python("", args=[str(ROOT / "tools" / "demo.py")], env=environment(simrt, vendor))
    assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == "PASS", proc.stdout[-2000:] + proc.stderr[-2000:]
