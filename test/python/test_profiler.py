"""torch.profiler on flagos (docs/profiler.md): device spans from the host
plugin's stream workers appear in the profile and in the exported Chrome
trace, on the stream the work ran on and tied to the operator that launched
it, and copies with their size and direction; flagos allocations appear
with profile_memory=True; FLAGOS_TRACE logs each session. The operators under
test take the native route (host_native.toml), whose kernels run on the
plugin's streams."""

from __future__ import annotations

import json

from conftest import ROOT, run_python

# The host plugin even where an accelerator is present: the spans asserted are
# its stream workers'.
NATIVE = {"FLAGOS_PLUGIN": "host", "FLAGOS_BACKEND_CONFIG": str(ROOT / "confs" / "host_native.toml")}

PRELUDE = """
import json, os, tempfile, torch, torch_fl
from torch.profiler import profile, ProfilerActivity

def device_spans(prof):
    return [e for e in prof.events() if e.device_type == torch.device("flagos").type
            or str(e.device_type).endswith("FLAGOS") or str(e.device_type).endswith("PrivateUse1")]

def chrome_trace(prof):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)["traceEvents"]
    finally:
        os.unlink(path)
"""


def run(code: str, **env: str) -> tuple[dict, list[str]]:
    """The JSON the code prints last, and its [flagos] profiler: lines."""
    proc = run_python(PRELUDE + code, env={**NATIVE, **env})
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    lines = [l for l in proc.stderr.splitlines() if l.startswith("[flagos] profiler:")]
    return json.loads(proc.stdout.strip().splitlines()[-1]), lines


def test_a_matmul_shows_its_device_span_on_its_stream_tied_to_the_cpu_op():
    out, log = run("""
a, b = torch.randn(32, 16), torch.randn(16, 8)
fa, fb = a.to("flagos"), b.to("flagos")
s = torch.flagos.Stream()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
             profile_memory=True) as prof:
    with torch.flagos.stream(s):
        c = torch.mm(fa, fb)
    torch.flagos.current_stream().wait_stream(s)  # c is s's until then
    back = c.cpu()
spans = [e for e in device_spans(prof) if e.name == "aten::mm.out"]
cpu_mm = [e for e in prof.events() if e.name == "aten::mm"]
trace = chrome_trace(prof)
kernels = [t for t in trace if t.get("cat") == "kernel" and t["name"] == "aten::mm.out"]
ops = [t for t in trace if t.get("cat") == "cpu_op" and t["name"] == "aten::mm"]
memory = [t for t in trace if t["name"] == "[memory]"
          and t["args"].get("Device Type") == int(torch._C._autograd.DeviceType.PrivateUse1)]
print(json.dumps({
    "stream": s.stream_id,
    "span_streams": [e.device_resource_id for e in spans],
    "cpu_kernels": [[k.name for k in e.kernels] for e in cpu_mm],
    "span_ids": [e.id for e in spans], "cpu_ids": [e.id for e in cpu_mm],
    "trace_kernels": [(k["args"]["External id"], k["args"]["stream"], k["ts"], k["dur"]) for k in kernels],
    "trace_ops": [(o["args"]["External id"], o["ts"], o["dur"]) for o in ops],
    "memory_bytes": [m["args"]["Bytes"] for m in memory],
    "copies": [(t["args"]["bytes"], t["args"]["kind"]) for t in trace if t.get("cat") == "gpu_memcpy"],
    "result_ok": torch.allclose(back, a @ b, atol=1e-4),
}))
""")
    assert out["result_ok"]
    # One device span for the one matmul, on the stream it was enqueued on.
    assert out["span_streams"] == [out["stream"]] and out["stream"] != 0
    # The CPU op lists it as its kernel, through the correlation id.
    assert out["cpu_kernels"] == [["aten::mm.out"]]
    assert out["span_ids"] == out["cpu_ids"]
    # The Chrome trace carries the span on the stream's row, linked to the op
    # by its External id, starting after the op began.
    [(kernel_id, kernel_stream, kernel_ts, kernel_dur)] = out["trace_kernels"]
    [(op_id, op_ts, op_dur)] = out["trace_ops"]
    assert kernel_id == op_id and kernel_stream == out["stream"]
    assert kernel_ts >= op_ts and kernel_dur >= 0
    # profile_memory: the output's flagos allocation (32 x 8 floats, rounded
    # to the allocator's block size).
    assert any(b >= 32 * 8 * 4 for b in out["memory_bytes"])
    # The copy of the result back, with its size and direction.
    assert [32 * 8 * 4, "DtoH"] in out["copies"]
    # FLAGOS_TRACE is off: the profiler says nothing.
    assert log == []


def test_profiling_leaves_the_process_usable_and_cpu_only_profiles_have_no_device_rows():
    out, log = run("""
a = torch.randn(8, 8)
fa = a.to("flagos")
counts = []
for activities in ([ProfilerActivity.CPU, ProfilerActivity.PrivateUse1], [ProfilerActivity.CPU],
                   [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]):
    with profile(activities=activities) as prof:
        torch.mm(fa, fa).cpu()
    counts.append(len([e for e in device_spans(prof) if e.name == "aten::mm.out"]))
after = torch.mm(fa, fa).cpu()
print(json.dumps({"counts": counts, "ok": torch.allclose(after, a @ a, atol=1e-4)}))
""", FLAGOS_TRACE="1")
    assert out["counts"] == [1, 0, 1]
    assert out["ok"]
    # FLAGOS_TRACE: each session that records device activity says so, and
    # what it collected; the CPU-only profile opens none.
    assert sum("recording device activity" in l for l in log) == 2
    assert sum("tied to an operator" in l for l in log) == 2


def test_a_plugin_without_the_extension_profiles_the_cpu_side_and_flagos_memory():
    out, _ = run("""
fa = torch.randn(8, 8).to("flagos")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
             profile_memory=True) as prof:
    torch.mm(fa, fa).cpu()
flagos = int(torch._C._autograd.DeviceType.PrivateUse1)
print(json.dumps({"spans": len(device_spans(prof)),
                  "ops": len([e for e in prof.events() if e.name == "aten::mm"]),
                  "memory": len([t for t in chrome_trace(prof) if t["name"] == "[memory]"
                                 and t["args"].get("Device Type") == flagos])}))
""", FLAGOS_PLUGIN_OPTIONS="profiler=0")
    assert out["spans"] == 0 and out["ops"] == 1
    assert out["memory"] >= 1
