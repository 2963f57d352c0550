"""The CUDA-shaped plugins' own device tracer (plugins/cudalike/tracer.h):
FLAGOS_EXTENSION_PROFILER over CUPTI (cuda, ppu) or MUPTI (musa), here on the
simulated tracer libraries of test/simrt (activity/), which record copies
and memsets as CUPTI does. With a CPU build of torch no other client of the
activity API exists, so torch.profiler's flagos rows come from the plugin.
Simulated-runtime results, not hardware results (the H200 run is
test/gpu/test_profiler_cuda.py)."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import environment  # noqa: E402

PROFILE_COPIES = """
import json, os, tempfile, torch, torch_fl
from torch.profiler import profile, ProfilerActivity
x = torch.arange(4096, dtype=torch.float32)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    y = x.to("flagos")
    back = y.cpu()
    torch.flagos.synchronize()
fd, path = tempfile.mkstemp(suffix=".json")
os.close(fd)
prof.export_chrome_trace(path)
trace = json.load(open(path))["traceEvents"]
os.unlink(path)
ops = {t["args"].get("External id"): t["name"] for t in trace if t.get("cat") == "cpu_op"}
print(json.dumps({
    "copies": sorted((t["args"]["kind"], t["args"]["bytes"], ops.get(t["args"].get("External id")))
                     for t in trace if t.get("cat") == "gpu_memcpy"),
    "same": bool(torch.equal(back, x)),
}))
"""


def last_json(stdout: str):
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("vendor", ["cuda", "musa"])
def test_torch_profiler_shows_each_copy_tied_to_the_operator_that_made_it(vendor, simrt):
    proc = run_python(PROFILE_COPIES, env=environment(simrt, vendor), check=True)
    out = last_json(proc.stdout)
    assert out["same"]
    # One span per direction, with its size, linked to the copy operator.
    copies = out["copies"]
    assert [c[:2] for c in copies] == [["DtoH", 16384], ["HtoD", 16384]], copies
    assert [c[2] for c in copies] == ["aten::_copy_from"] * 2, copies  # the innermost operator


def test_the_tracer_library_variable_replaces_the_search(simrt):
    # The ppu SDK's copy, named explicitly, is what the cuda plugin opens.
    chosen = simrt / "ppu" / "CUDA_SDK" / "lib64" / "libcupti.so.13"
    env = environment(simrt, "cuda", FLAGOS_TRACER_LIBRARY=str(chosen), FLAGOS_TRACE="1")
    proc = run_python(PROFILE_COPIES, env=env, check=True)
    assert f"[flagos] cuda tracer: {chosen} (FLAGOS_TRACER_LIBRARY)" in proc.stderr.splitlines(), proc.stderr


def test_a_tracer_library_that_does_not_open_leaves_a_cpu_profile_and_says_why(simrt):
    env = environment(simrt, "cuda", FLAGOS_TRACER_LIBRARY="/nonexistent/libcupti.so.13")
    proc = run_python(PROFILE_COPIES, env=env, check=True)
    out = last_json(proc.stdout)
    assert out["same"] and out["copies"] == []
    why = [l for l in proc.stderr.splitlines() if "device activity is not profiled" in l]
    assert len(why) == 1 and "FLAGOS_TRACER_LIBRARY=/nonexistent/libcupti.so.13" in why[0], proc.stderr


def test_a_tracer_of_another_vendor_is_refused_naming_the_missing_call(simrt):
    # MUSA's plugin given CUPTI: the calls it resolves are mupti*.
    cupti = simrt / "cuda" / "lib64" / "libcupti.so.13"
    env = environment(simrt, "musa", FLAGOS_TRACER_LIBRARY=str(cupti))
    proc = run_python(PROFILE_COPIES, env=env, check=True)
    assert f"{cupti} has no muptiActivityEnable" in proc.stderr, proc.stderr
