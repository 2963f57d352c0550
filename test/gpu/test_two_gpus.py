"""Two GPUs seen as flagos:0 and flagos:1 (the two-GPU machine): work on
flagos:1 runs on the second GPU and leaves the first alone, large copies
between the two are exact, and a model split across them trains as it does
on the CPU. Only the first needs CUDA; the others run on any plugin with two
devices (the host plugin has two). The torch-level suite's `two_devices`
tests cover the rest (streams, events, memory stats, copies of every
layout) on the same run."""

from __future__ import annotations

import pytest
import torch

import torch_fl  # noqa: F401

F = torch.flagos

pytestmark = pytest.mark.skipif(F.device_count() < 2, reason="needs two flagos devices")


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_work_on_the_second_device_runs_on_the_second_gpu():
    torch.cuda.synchronize(0)
    first = (torch.cuda.memory_allocated(0), F.memory_allocated(0))
    g = torch.Generator().manual_seed(0)
    a = torch.randn(1024, 1024, generator=g)
    x = a.to("flagos:1")
    y = (x @ x).relu().sum(0)
    assert y.device == torch.device("flagos", 1)
    assert F.memory_allocated(1) > 0
    assert torch.cuda.memory_allocated(1) > 0  # the kernels' results, from CUDA's allocator there
    assert (torch.cuda.memory_allocated(0), F.memory_allocated(0)) == first
    assert F.current_device() == 0
    torch.testing.assert_close(y.cpu(), (a.double() @ a.double()).relu().sum(0).float(), rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("non_blocking", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_large_copies_between_the_gpus_are_exact(dtype, non_blocking):
    g = torch.Generator().manual_seed(1)
    host = (torch.randn(4096, 2048, generator=g) * 100).to(dtype)  # 16 to 64 MiB
    there = host.to("flagos:0").to("flagos:1", non_blocking=non_blocking)
    back = there.t().contiguous().to("flagos:0", non_blocking=non_blocking)  # a strided source, and back
    F.synchronize(1)
    F.synchronize(0)
    assert there.device == torch.device("flagos", 1) and back.device == torch.device("flagos", 0)
    assert torch.equal(there.cpu(), host)
    assert torch.equal(back.cpu(), host.t())


def test_a_model_split_across_the_gpus_trains_like_the_cpu(full_fp32):
    """Layer 1 on flagos:0, layer 2 on flagos:1: activations cross forward,
    gradients cross back (autograd's per-device threads and the stream
    handoff between them), and a foreach SGD step updates both devices'
    parameters. The CPU is the reference: native CUDA's backward asserts in a
    process where flagos is the accelerator (tools/bench/gpu_train_split.py)."""
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 10))
    first = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU()).to("flagos:0")
    second = torch.nn.Linear(512, 10).to("flagos:1")
    with torch.no_grad():
        for mine, theirs in zip(list(first.parameters()) + list(second.parameters()), ref.parameters()):
            mine.copy_(theirs)
    params = list(first.parameters()) + list(second.parameters())
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=True)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9, foreach=True)
    g = torch.Generator().manual_seed(2)
    for _ in range(3):
        x, target = torch.randn(64, 256, generator=g), torch.randint(0, 10, (64,), generator=g)
        loss = torch.nn.functional.cross_entropy(second(first(x.to("flagos:0")).to("flagos:1")), target.to("flagos:1"))
        loss.backward()
        opt.step()
        opt.zero_grad()
        loss_ref = torch.nn.functional.cross_entropy(ref(x), target)
        loss_ref.backward()
        opt_ref.step()
        opt_ref.zero_grad()
        torch.testing.assert_close(loss.cpu(), loss_ref.detach(), rtol=1e-4, atol=1e-4)
    assert [p.device.index for p in params] == [0, 0, 1, 1]
    for mine, theirs in zip(params, ref.parameters()):
        torch.testing.assert_close(mine.detach().cpu(), theirs.detach(), rtol=1e-4, atol=1e-4)
