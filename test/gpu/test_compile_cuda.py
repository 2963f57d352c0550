"""torch.compile on flagos over the cuda plugin: Inductor's Triton codegen on
the flagos current stream, against native compiled CUDA (docs/compile.md)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
import torch

if __name__ != "__main__":
    import torch_fl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("fresh_dynamo")]


def test_the_cuda_plugin_compiles_with_triton():
    assert torch_fl.compile.codegen(0) == "triton"


def _block(d: int = 64) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True)


def test_compiled_inference_matches_native_compiled(full_fp32):
    model = _block()
    x = torch.randn(2, 16, 64)
    outs = {}
    for device in ("cuda", "flagos"):
        with torch.no_grad():
            outs[device] = torch.compile(copy.deepcopy(model).to(device).eval())(x.to(device)).cpu()
    torch.testing.assert_close(outs["flagos"], outs["cuda"], rtol=1e-4, atol=1e-5)


def _train_losses(device: str) -> list[float]:
    """Three compiled AdamW steps of _block on `device`, fp32 matmuls."""
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    m = _block().to(device)
    step = torch.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(3):
        loss = step(torch.randn(2, 16, 64, generator=g).to(device)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def test_compiled_training_with_adamw_matches_native_compiled(full_fp32):
    # Native CUDA's side in a process without torch_fl: a reference nothing
    # torch_fl installs can touch.
    native = subprocess.run([sys.executable, __file__, "--train", "cuda"], capture_output=True, text=True,
                            env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
                            timeout=600, cwd=os.path.dirname(__file__))
    assert native.returncode == 0, native.stderr[-4000:]
    torch.testing.assert_close(_train_losses("flagos"), json.loads(native.stdout.splitlines()[-1]),
                               rtol=1e-4, atol=1e-5)


def test_compiled_kernels_run_on_the_flagos_current_stream():
    # Work queued on a side stream, then a compiled function on that stream:
    # ordered by the stream alone (no synchronisation in between).
    f = torch.compile(lambda a: (a * 2).sin().sum())
    side = torch.flagos.Stream()
    x = torch.zeros(1 << 22, device="flagos")
    side.wait_stream(torch.flagos.current_stream())
    with torch.flagos.stream(side):
        for _ in range(20):
            x.add_(1)
        out = f(x)
    side.synchronize()
    torch.testing.assert_close(out.cpu(), (torch.full((1 << 22,), 20.0) * 2).sin().sum(), rtol=1e-4, atol=1e-2)


def test_dynamic_shapes_compile_once():
    from torch._dynamo.testing import CompileCounterWithBackend
    counter = CompileCounterWithBackend("flagos")
    f = torch.compile(lambda a: torch.nn.functional.gelu(a).cumsum(0), backend=counter, dynamic=True)
    for n in (7, 33, 129):
        x = torch.randn(n, 5, device="flagos")
        torch.testing.assert_close(f(x).cpu(), torch.nn.functional.gelu(x.cpu()).cumsum(0), rtol=1e-4, atol=1e-4)
    assert counter.frame_count == 1


def test_max_autotune_compiles_a_matmul(full_fp32):
    a, b = torch.randn(256, 128), torch.randn(128, 64)
    f = torch.compile(lambda x, y: torch.relu(x @ y), mode="max-autotune-no-cudagraphs")
    torch.testing.assert_close(f(a.to("flagos"), b.to("flagos")).cpu(), torch.relu(a @ b), rtol=1e-4, atol=1e-4)


def test_pad_mm_times_an_unaligned_linear_with_bias(monkeypatch):
    """Inductor's pad_mm pass times an unaligned matmul padded and not before
    choosing; on flagos an addmm (a Linear with a bias) takes that timing too
    and compiles to what eager computes."""
    from torch._inductor.fx_passes import pad_mm

    timed = []
    monkeypatch.setattr(pad_mm, "get_cached_should_pad", lambda key: None)  # time it even if a run before did
    monkeypatch.setattr(pad_mm, "set_cached_should_pad", lambda key, value: timed.append(value))
    torch.manual_seed(0)
    lin = torch.nn.Linear(1001, 1003).half().to("flagos")
    x = torch.randn(4097, 1001, dtype=torch.half, device="flagos")
    with torch.no_grad():
        out = torch.compile(lin)(x)
        ref = lin(x)
    assert timed, "pad_mm did not time the addmm"
    torch.testing.assert_close(out.cpu(), ref.cpu(), rtol=2e-2, atol=2e-2)


def test_reduce_overhead_mode_runs_and_matches():
    # Inductor's CUDA-graph trees are torch.cuda's own: on flagos the mode
    # compiles and runs without them (docs/compile.md).
    f = torch.compile(lambda a: (a.sin() * 2).relu(), mode="reduce-overhead")
    x = torch.randn(1024, device="flagos")
    for _ in range(3):
        y = f(x)
    torch.testing.assert_close(y.cpu(), (x.cpu().sin() * 2).relu())


if __name__ == "__main__":  # the native side of the training test, without torch_fl
    print(json.dumps(_train_losses(sys.argv[sys.argv.index("--train") + 1])))
