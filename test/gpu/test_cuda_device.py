"""The flagos device on the cuda plugin, where native CUDA is the control:
running out of GPU memory, and streams that really run concurrently."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import torch_fl

pytestmark = pytest.mark.gpu

F = torch.flagos


def _format_bytes(n: int) -> str:
    """core/runtime/memory/out_of_memory.cpp's format_bytes, for matching its message."""
    if n < 1024:
        return f"{n} bytes"
    value, unit = n / 1024, 0
    while value >= 1024 and unit < 5:
        value, unit = value / 1024, unit + 1
    return f"{value:.2f} {('KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB')[unit]}"


def test_allocating_past_free_memory_raises_and_the_device_keeps_working():
    keep = torch.full((1 << 20,), 3.0, device="flagos")
    F.synchronize()
    F.empty_cache()  # else the retry after freeing the cache could fit the request
    allocated = F.memory_allocated()
    free, total = F.mem_get_info()
    request = ((free >> 30) + 2) << 30  # whole GiB, so block rounding leaves it as it is
    with pytest.raises(torch.OutOfMemoryError) as caught:
        torch.empty(request, dtype=torch.uint8, device="flagos")
    message = str(caught.value)
    assert message.startswith(f"[flagos] out of memory on {torch_fl.plugin_info()['name']} device 0"), message
    assert f"tried to allocate {_format_bytes(request)}" in message, message
    assert f"free of {_format_bytes(total)} total" in message, message
    assert F.memory_allocated() == allocated
    y = torch.arange(1000.0, device="flagos") + 1
    assert y.sum().item() == sum(range(1, 1001))
    assert keep[-4:].cpu().tolist() == [3.0] * 4


@pytest.mark.parametrize("device", ["cuda", "flagos"])
def test_side_stream_work_does_not_hold_up_the_current_stream(device, full_fp32):
    """About 0.3 s of matmuls queued on a side stream; a small op on the
    current stream must finish while they are still running. On flagos this
    fails if boxed CUDA kernels launch on the legacy default stream instead of
    the flagos current stream, or if flagos streams synchronise with each
    other; native CUDA shows the test itself is sound."""
    module = torch.get_device_module(device)
    a = torch.randn(4096, 4096, device=device)
    # Load the small op's kernel and allocator pool first: CUDA's lazy module
    # loading may otherwise make its first launch wait for running work.
    (torch.ones(4, device=device) + 1).cpu()
    (a[:8, :8] @ a[:8, :8]).cpu()
    module.synchronize()
    side = module.Stream()
    with module.stream(side):
        for _ in range(100):
            b = a @ a
        side_done = torch.Event(device=device)
        side_done.record(side)
    x = torch.ones(4, device=device) + 1
    here_done = torch.Event(device=device)
    here_done.record()
    here_done.synchronize()
    assert not side_done.query(), "the current stream waited for the side stream's matmuls"
    side_done.synchronize()
    assert x.cpu().tolist() == [2.0] * 4
    torch.testing.assert_close(b[:2, :2].cpu(), (a[:2].cpu() @ a[:, :2].cpu()), rtol=1e-3, atol=1e-2)


def test_cuda_current_stream_follows_flagos_and_a_chosen_one_is_kept():
    """CUDA code run between flagos ops (a custom kernel, a library launching
    on torch.cuda.current_stream()) finds the flagos current stream, inside a
    flagos stream context too; a CUDA stream the user chose stays theirs, and
    flagos ops inside it still run on the flagos stream."""
    def cuda_handle():
        return torch.cuda.current_stream().cuda_stream

    x = torch.ones(4, device="flagos")
    assert (x + 1).cpu().tolist() == [2.0] * 4
    assert cuda_handle() == torch.flagos.current_stream().native_handle
    side = torch.flagos.Stream()
    with torch.flagos.stream(side):
        y = x + 1
        assert cuda_handle() == side.native_handle
    assert cuda_handle() == torch.flagos.current_stream().native_handle != side.native_handle
    mine = torch.cuda.Stream()
    with torch.cuda.stream(mine):
        z = x * 3
        assert torch.cuda.current_stream() == mine
    torch.flagos.current_stream().synchronize()  # z's kernel ran on the flagos stream, not on `mine`
    assert z.cpu().tolist() == [3.0] * 4
    side.synchronize()
    assert y.cpu().tolist() == [2.0] * 4


@pytest.mark.parametrize("convert", [
    pytest.param(lambda x: x.to(torch.bfloat16), id="dtype"),
    pytest.param(lambda x: x.t().contiguous(), id="layout"),
    pytest.param(lambda x: torch.empty_like(x, dtype=torch.float16).copy_(x), id="copy_"),
])
def test_same_device_conversions_stay_on_the_device(convert):
    """Autocast casts and .contiguous() are same-device copies with a dtype or
    layout change: they must run as device kernels queued on the current
    stream (returning at once while the stream is busy), not as a host round
    trip that waits for the stream."""
    if not torch_fl._C._testing_has_delay():
        pytest.skip("the plugin has no testing extension (stream_enqueue_delay)")
    import time

    x = torch.randn(512, 256, device="flagos")
    expected = convert(x.cpu())
    F.synchronize()
    torch_fl._C._testing_enqueue_delay(F.current_stream(), 300_000)
    start = time.perf_counter()
    y = convert(x)
    took = time.perf_counter() - start
    assert took < 0.15, f"the conversion waited {took:.3f} s for the stream"
    assert y.device.type == "flagos"
    torch.testing.assert_close(y.cpu(), expected)


def test_attention_host_results_stay_on_the_host_and_backward_matches():
    """Memory-efficient attention returns its philox seed and offset as host
    tensors on native CUDA. On flagos they stay host tensors too (copying them
    to the device cost two transfers per call), and the backward kernel,
    which reads them on the host, still gives the right gradients. The
    reference is the CPU's math attention: torch 2.11 asserts in autograd
    when native CUDA runs a backward in a process where flagos is the
    accelerator (tools/bench/gpu_train_split.py)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 32, 64, generator=g) for _ in range(3))
    op = torch.ops.aten._scaled_dot_product_efficient_attention
    with torch.no_grad():
        _, _, seed_c, offset_c = op(q.cuda(), k.cuda(), v.cuda(), None, True)
    leaves = [t.to("flagos").requires_grad_() for t in (q, k, v)]
    out, lse, seed, offset = op(*leaves, None, True)
    assert (seed.device.type, offset.device.type) == (seed_c.device.type, offset_c.device.type)
    assert out.device.type == lse.device.type == "flagos"
    out.sum().backward()

    ref_leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    ref = torch.nn.functional.scaled_dot_product_attention(*ref_leaves)
    ref.sum().backward()
    torch.testing.assert_close(out.cpu(), ref.detach(), rtol=1e-4, atol=1e-4)
    for mine, theirs in zip(leaves, ref_leaves):
        torch.testing.assert_close(mine.grad.cpu(), theirs.grad, rtol=1e-4, atol=1e-4)


def test_a_route_the_plugin_cannot_serve_falls_back_to_cuda_not_the_host():
    # The cuda plugin has no native kernels: `native` routes are demoted to its
    # stock boxing target (torch's CUDA kernels, zero-copy), not cpu_fallback.
    env = dict(os.environ, FLAGOS_OP_abs="native", FLAGOS_OP_neg="native", FLAGOS_ALIAS_CUDA="0")
    code = ("import torch, torch_fl\n"
            "r = torch_fl.routes('abs')[0]\n"
            "x = torch.randn(1000, device='flagos')\n"
            "print(r['route'], bool(torch.equal(x.abs().cpu(), x.cpu().abs())), bool(torch.equal((-x).cpu(), -x.cpu())))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cuda", "True", "True"], proc.stdout + proc.stderr
    assert "[flagos] 2 routes to native: plugin 'cuda' has no native kernels; they run as cuda (abs, neg)" \
        in proc.stderr, proc.stderr


def test_nvml_readings_are_those_of_the_cuda_device_under_flagos():
    """torch.flagos.utilization and kin answer from NVML for the CUDA device
    a flagos device of the cuda plugin is (flagos:0 is cuda:0)."""
    names = ("utilization", "memory_usage", "temperature", "power_draw", "clock_rate")
    got = {n: getattr(torch.flagos, n)(0) for n in names}
    assert all(isinstance(v, int) and v >= 0 for v in got.values()), got
    assert got["temperature"] > 0 and got["clock_rate"] > 0 and got["power_draw"] > 0, got
    assert abs(got["temperature"] - torch.cuda.temperature(0)) <= 3
    assert abs(got["clock_rate"] - torch.cuda.clock_rate(0)) <= 200

