"""torch.profiler over a flagos training step on the cuda plugin
(docs/profiler.md): torch's own CUDA tracer records the GPU work flagos
launches and reports it as PrivateUse1 device events tied to the CPU
operators that launched them, in the profile and in the Chrome trace."""

from __future__ import annotations

import json
import os
import tempfile

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.gpu


def test_a_training_step_shows_device_kernels_with_their_cpu_ops():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True).to("flagos")
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-3)
    x = torch.randn(8, 32, 64, device="flagos")
    for _ in range(2):  # warm up: first-call work out of the profile
        layer(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
    torch.flagos.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        layer(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
        torch.flagos.synchronize()
    ops_with_kernels = {e.name for e in prof.events() if e.kernels}
    assert {"aten::addmm", "aten::mm"} & ops_with_kernels, sorted(ops_with_kernels)[:20]
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)["traceEvents"]
    finally:
        os.unlink(path)
    kernels = [t for t in trace if t.get("cat") == "kernel"]
    cpu_ids = {t["args"].get("External id") for t in trace if t.get("cat") == "cpu_op"}
    assert len(kernels) >= 20
    linked = [k for k in kernels if k["args"].get("External id") in cpu_ids]
    assert len(linked) >= len(kernels) // 2  # kernels carry their launching op's id


def _repo() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_plugins_own_cupti_tracer_records_kernels_outside_torch(tmp_path):
    """Where torch brings no CUPTI client (a CPU build of torch, or no torch),
    the cuda plugin's own tracer records what runs on its streams: a kernel
    launched through the driver and a memset, each with the correlation id
    pushed while it was enqueued (test/gpu/tracer_probe.cpp)."""
    import shutil
    import subprocess

    import torch_fl

    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on this machine")
    plugin = torch_fl._C.active_plugin()["path"]
    probe = tmp_path / "tracer_probe"
    subprocess.run([compiler, "-std=c++17", "-O1", "-I", os.path.join(_repo(), "include"),
                    os.path.join(_repo(), "test", "gpu", "tracer_probe.cpp"), "-ldl", "-o", str(probe)],
                   check=True)
    done = subprocess.run([str(probe), plugin], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "FLAGOS_TRACE": "1"})
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    assert "kernels=3 memsets=1" in done.stdout

