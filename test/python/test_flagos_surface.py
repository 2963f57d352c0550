"""torch.flagos offers torch.cuda's everyday names: the ones flagos can back do
what torch.cuda's do, the others raise one `[flagos] ... is not available`
error that says why."""

from __future__ import annotations

import json

from conftest import run_python

BASE = {"FLAGOS_PLUGIN": "host"}


def run_json(code: str, **env: str) -> dict:
    """Runs `code` after `import torch, torch_fl`; `code` leaves its answer in `out`."""
    prelude = "import json, torch, torch_fl\nout = {}\n"
    proc = run_python(prelude + code + "\nprint(json.dumps(out))\n", env={**BASE, **env}, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_name_in_all_exists_and_range_stays_out_of_star_imports():
    out = run_json("""
import torch.flagos as f
out["missing"] = [n for n in f.__all__ if not hasattr(f, n)]
out["range_in_all"] = "range" in f.__all__
ns = {}
exec("from torch_fl.flagos import *", ns)
out["builtin_range_kept"] = "range" not in ns
out["arch_list"] = f.get_arch_list()
""")
    assert out["missing"] == []
    assert out["range_in_all"] is False and out["builtin_range_kept"] is True
    assert out["arch_list"] and all(isinstance(a, str) for a in out["arch_list"])


def test_is_bf16_supported_and_bf16_autocast_work():
    out = run_json("""
out["bf16"] = torch.flagos.is_bf16_supported()
out["bf16_no_emulation"] = torch.flagos.is_bf16_supported(including_emulation=False)
a = torch.randn(4, 4, device="flagos")
with torch.autocast("flagos", dtype=torch.bfloat16):
    out["dtype"] = str((a @ a).dtype)
""")
    assert out == {"bf16": True, "bf16_no_emulation": True, "dtype": "torch.bfloat16"}


def test_a_flagos_oom_is_caught_as_torch_flagos_out_of_memory_error():
    out = run_json("""
out["same_class"] = torch.flagos.OutOfMemoryError is torch.OutOfMemoryError
try:
    torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device="flagos")
    out["caught"] = None
except torch.flagos.OutOfMemoryError as e:
    out["caught"] = str(e)
out["num_ooms"] = torch.flagos.memory_stats()["num_ooms"]
x = torch.ones(1024, device="flagos")   # the device still works afterwards
out["after"] = float(x.sum())
""", FLAGOS_PLUGIN_OPTIONS="memory_mb=64")
    assert out["same_class"] is True
    assert out["caught"] is not None and out["caught"].startswith("[flagos] out of memory on host device 0")
    assert out["num_ooms"] == 1 and out["after"] == 1024.0


def test_a_per_process_memory_fraction_caps_what_the_allocator_reserves():
    """64 MiB device, fraction 0.5: 28 MiB of segments fit, 12 MiB more do
    not (torch's OutOfMemoryError, naming the cap), they do once 16 MiB went
    back, and 1.0 lifts the cap."""
    out = run_json("""
def take(mib):
    return torch.empty(mib << 20, dtype=torch.uint8, device="flagos")

f = torch.flagos
out["default"] = f.get_per_process_memory_fraction()
f.set_per_process_memory_fraction(0.5)
out["set"] = f.get_per_process_memory_fraction()
a, b = take(12), take(16)
try:
    take(12)
    out["capped"] = None
except torch.OutOfMemoryError as e:
    out["capped"] = str(e)
del b
c = take(12)
f.set_per_process_memory_fraction(1.0)
d = take(30)
out["reserved_mib"] = f.memory_reserved() >> 20
for bad in (1.5, -0.1):
    try:
        f.set_per_process_memory_fraction(bad)
    except ValueError as e:
        out[str(bad)] = str(e)
try:
    f.set_per_process_memory_fraction(1)
except TypeError as e:
    out["int"] = str(e)
""", FLAGOS_PLUGIN_OPTIONS="memory_mb=64")
    assert out["default"] == 1.0 and out["set"] == 0.5
    assert out["capped"].startswith("[flagos] out of memory on host device 0: tried to allocate 12.00 MiB")
    assert "this process may reserve 32.00 MiB (torch.flagos.set_per_process_memory_fraction)" in out["capped"]
    assert out["reserved_mib"] > 32
    assert out["1.5"] == "Invalid fraction value: 1.5. Allowed range: 0~1" and "-0.1" in out
    assert out["int"] == "Invalid type for fraction argument, must be `float`"


def test_peak_statistics_reset_and_keep_torch_cuda_keys():
    out = run_json("""
import warnings
f = torch.flagos
keys = ["allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.peak",
        "active_bytes.large_pool.freed", "requested_bytes.small_pool.allocated",
        "segment.all.current", "num_alloc_retries", "num_ooms"]
out["missing_keys"] = [k for k in keys if k not in f.memory_stats()]
big = torch.empty(8 * 1024 * 1024, dtype=torch.uint8, device="flagos")
del big
out["peak_before"] = f.max_memory_allocated()
out["reserved_peak_before"] = f.max_memory_reserved()
f.reset_peak_memory_stats()
out["peak_after_reset"] = f.max_memory_allocated()
big = torch.empty(8 * 1024 * 1024, dtype=torch.uint8, device="flagos")
del big
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    f.reset_max_memory_allocated()
out["deprecation"] = [str(x.category.__name__) for x in w]
out["peak_after_deprecated_reset"] = f.max_memory_allocated()
""")
    assert out["missing_keys"] == []
    assert out["peak_before"] >= 8 * 1024 * 1024
    assert out["reserved_peak_before"] >= out["peak_before"]
    assert out["peak_after_reset"] < 8 * 1024 * 1024
    assert out["deprecation"] == ["FutureWarning"]
    assert out["peak_after_deprecated_reset"] < 8 * 1024 * 1024


def test_can_device_access_peer_follows_the_peer_access_capability():
    out = run_json("""
f = torch.flagos
out["caps"] = f.get_device_properties(0).capabilities
out["0_1"] = f.can_device_access_peer(0, 1)
out["1_0"] = f.can_device_access_peer(torch.device("flagos", 1), "flagos:0")
out["0_0"] = f.can_device_access_peer(0, 0)
try:
    f.can_device_access_peer(0, 2)
    out["bad"] = None
except ValueError as e:
    out["bad"] = str(e)
""")
    assert "peer_access" in out["caps"]
    assert (out["0_1"], out["1_0"], out["0_0"]) == (True, True, False)
    assert out["bad"] == "[flagos] invalid peer device 2: 2 flagos devices"


def test_caching_allocator_alloc_takes_memory_from_the_allocator_and_delete_gives_it_back():
    out = run_json("""
f = torch.flagos
base = f.memory_allocated(1)
s = f.Stream(device=1)
ptr = f.caching_allocator_alloc(1 << 20, device=1, stream=s)
out["ptr"] = ptr
out["grew"] = f.memory_allocated(1) - base
out["other_device"] = f.memory_allocated(0)
f.caching_allocator_delete(ptr)
out["after_delete"] = f.memory_allocated(1) - base
try:
    f.caching_allocator_delete(ptr)
    out["double_delete"] = None
except RuntimeError as e:
    out["double_delete"] = str(e)
f.caching_allocator_delete(0)
""")
    assert out["ptr"] != 0
    assert out["grew"] >= 1 << 20 and out["other_device"] == 0
    assert out["after_delete"] == 0
    assert out["double_delete"] == (f"[flagos] caching_allocator_delete: {out['ptr']:#x} was not "
                                    "allocated by torch.flagos.caching_allocator_alloc")


def test_ranges_are_profiler_record_functions():
    out = run_json("""
f = torch.flagos
from torch.profiler import profile, ProfilerActivity
x = torch.ones(8, device="flagos")
with profile(activities=[ProfilerActivity.CPU]) as prof:
    with f.range("outer_{}", 7):
        out["depth_inner"] = f.range_push("inner_range")
        x = x * 2
        out["pop_inner"] = f.range_pop()
out["pop_empty"] = f.range_pop()
names = {e.name for e in prof.events()}
out["names"] = sorted(n for n in names if n in ("outer_7", "inner_range"))
""")
    assert out["depth_inner"] == 1 and out["pop_inner"] == 1 and out["pop_empty"] == -1
    assert out["names"] == ["inner_range", "outer_7"]


REFUSED = {
    **{name: (f"torch.flagos.{name}()",
              f"[flagos] {name} is not available on flagos: the plugin interface reports no such counter, "
              "and flagos:0 is no CUDA device torch.cuda could ask NVML about")
       for name in ("utilization", "memory_usage", "temperature", "power_draw", "clock_rate")},
    "sync_debug_warn": ("torch.flagos.set_sync_debug_mode('warn')",
                        "[flagos] set_sync_debug_mode('warn') is not available on flagos: the core "
                        "does not detect synchronizing calls; only 'default' (0) is"),
    "sync_debug_2": ("torch.flagos.set_sync_debug_mode(2)",
                     "[flagos] set_sync_debug_mode(2) is not available on flagos: the core does "
                     "not detect synchronizing calls; only 'default' (0) is"),
}


def test_what_flagos_cannot_back_raises_one_clear_error():
    calls = json.dumps({k: v[0] for k, v in REFUSED.items()})
    out = run_json(f"""
for key, call in json.loads({calls!r}).items():
    try:
        eval(call)
        out[key] = None
    except RuntimeError as e:
        out[key] = [type(e).__name__, str(e)]
torch.flagos.set_sync_debug_mode("default")
torch.flagos.set_sync_debug_mode(0)
out["sync_mode"] = torch.flagos.get_sync_debug_mode()
""")
    for key, (_, message) in REFUSED.items():
        assert out[key] == ["RuntimeError", message], key
    assert out["sync_mode"] == 0


def test_an_unknown_sync_debug_mode_is_a_value_error():
    proc = run_python("import torch, torch_fl; torch.flagos.set_sync_debug_mode('loud')", env=BASE)
    assert proc.returncode != 0
    assert ("ValueError: [flagos] invalid debug_mode 'loud': expected one of 'default', 'warn', "
            "'error' or 0, 1, 2") in proc.stderr



def test_host_memory_stats_count_pinned_blocks():
    out = run_json("""
before = torch.flagos.host_memory_stats()
x = torch.empty(1 << 20, dtype=torch.uint8).pin_memory()
during = torch.flagos.host_memory_stats()
out["keys"] = sorted(k for k in during if k.startswith("allocations."))
out["grew"] = during["allocated_bytes.current"] - before["allocated_bytes.current"] >= 1 << 20
out["host_alloc"] = during["num_host_alloc"] > before["num_host_alloc"]
out["cuda_shim"] = torch.cuda.host_memory_stats()["allocated_bytes.current"] == during["allocated_bytes.current"]
""")
    assert out["keys"] == ["allocations.allocated", "allocations.current", "allocations.freed", "allocations.peak"]
    assert out["grew"] and out["host_alloc"] and out["cuda_shim"]


def test_memory_snapshot_history_and_pools_say_what_they_do():
    out = run_json("""
x = torch.empty(1 << 20, device="flagos")
snap = torch.flagos.memory._snapshot()
out["segments"] = sum(s["total_size"] for s in snap["segments"]) >= 4 << 20
out["traces"] = snap["device_traces"]
torch.flagos.memory._record_memory_history(enabled=None)  # stopping: nothing to stop
errors = []
for call in (lambda: torch.flagos.memory._record_memory_history(), lambda: torch.flagos.MemPool(),
             lambda: torch.flagos.use_mem_pool(None)):
    try:
        call()
    except RuntimeError as e:
        errors.append(str(e).split(":")[0])
out["errors"] = errors
""")
    assert out["segments"] and out["traces"] == []
    assert out["errors"] == ["[flagos] memory._record_memory_history is not available on flagos",
                             "[flagos] MemPool is not available on flagos",
                             "[flagos] MemPool is not available on flagos"]


def test_device_properties_name_a_field_the_plugin_does_not_report():
    out = run_json("""
props = torch.flagos.get_device_properties(0)
out["probe"] = getattr(props, "L2_cache_size", None)  # how Inductor reads optional fields
try:
    props.warp_size
except AttributeError as e:
    out["error"] = str(e)
""")
    assert out["probe"] is None
    assert out["error"] == "[flagos] device properties of flagos:0 have no 'warp_size' (the plugin does not report it)"
