"""non_blocking copies: from and to pinned memory they are really
asynchronous (they return while the stream is held up by the plugin's
testing delay, and complete in stream order); from pageable memory they
are synchronous; a pinned buffer in flight is never handed out again."""

import time

import pytest
import torch

F = torch.flagos
DELAY = 0.3
N = 1 << 18


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def test_host_to_device_from_pinned_is_asynchronous(delay):
    src = torch.arange(N, dtype=torch.float32).pin_memory()
    dst = torch.empty(N, device="flagos")
    stream = F.current_stream()
    delay(stream, DELAY)
    _, took = timed(lambda: dst.copy_(src, non_blocking=True))
    assert took < DELAY / 2
    assert not stream.query()
    stream.synchronize()
    assert torch.equal(dst.cpu(), src)


def test_to_device_from_pinned_is_asynchronous(delay):
    src = torch.randn(N).pin_memory()
    stream = F.current_stream()
    delay(stream, DELAY)
    out, took = timed(lambda: src.to("flagos", non_blocking=True))
    assert took < DELAY / 2 and not stream.query()
    assert torch.equal(out.cpu(), src)  # .cpu() is synchronous: it waits in stream order


def test_device_to_pinned_host_is_asynchronous(delay):
    ref = torch.randn(N)
    src = ref.to("flagos")
    dst = torch.empty(N).pin_memory()
    stream = F.current_stream()
    delay(stream, DELAY)
    _, took = timed(lambda: dst.copy_(src, non_blocking=True))
    assert took < DELAY / 2 and not stream.query()
    stream.synchronize()
    assert torch.equal(dst, ref)


# Under a CUDA torch with a GPU present, ATen takes pinned host memory from
# CUDA's allocator whatever the accelerator (torch 2.11 asks CUDA first). Only a
# CUDA-ABI plugin can record its stream uses there; any other plugin must wait
# for copies into that memory (correct, not asynchronous).
CUDA_PINS_FOR_ANOTHER_PLUGIN = torch.cuda.is_available() and (
    "cuda_abi" not in torch.flagos.get_device_properties(0).capabilities)


@pytest.mark.skipif(CUDA_PINS_FOR_ANOTHER_PLUGIN, reason="pin_memory=True memory comes from torch's CUDA "
                    "allocator, where this (non-CUDA-ABI) plugin cannot record its stream")
def test_to_cpu_non_blocking_returns_pinned_memory(delay):
    ref = torch.randn(N)
    src = ref.to("flagos")
    stream = F.current_stream()
    delay(stream, DELAY)
    out, took = timed(lambda: src.to("cpu", non_blocking=True))
    assert took < DELAY / 2
    assert out.is_pinned()
    e = torch.Event(device="flagos")
    e.record()
    e.synchronize()
    assert torch.equal(out, ref)


def test_pageable_copies_are_synchronous(delay):
    src = torch.arange(N, dtype=torch.float32)
    dst = torch.empty(N, device="flagos")
    stream = F.current_stream()
    delay(stream, DELAY)
    _, took = timed(lambda: dst.copy_(src, non_blocking=True))
    assert took >= DELAY * 0.8  # waited for the stream: src may be reused at once
    host = torch.empty(N)
    delay(stream, DELAY)
    _, took = timed(lambda: host.copy_(dst, non_blocking=True))
    assert took >= DELAY * 0.8
    assert torch.equal(host, src)


def test_blocking_copy_from_pinned_waits(delay):
    src = torch.ones(N).pin_memory()
    dst = torch.empty(N, device="flagos")
    delay(F.current_stream(), DELAY)
    _, took = timed(lambda: dst.copy_(src))
    assert took >= DELAY * 0.8
    assert F.current_stream().query()


def test_pinned_source_in_flight_is_not_reused(delay):
    stream = F.current_stream()
    dst = torch.empty(N, device="flagos")
    src = torch.full((N,), 7.0).pin_memory()
    src_ptr = src.data_ptr()
    delay(stream, DELAY)
    dst.copy_(src, non_blocking=True)
    del src  # freed while the copy still waits behind the delay
    other = torch.empty(N).pin_memory()
    assert other.data_ptr() != src_ptr
    other.fill_(-1.0)
    stream.synchronize()
    assert dst.cpu().eq(7.0).all()


@pytest.mark.two_devices
def test_asynchronous_copy_to_the_second_device(delay):
    F.synchronize(0)  # idle before: what follows must queue nothing there
    src = torch.randn(N).pin_memory()
    stream = F.current_stream(1)
    delay(stream, DELAY)
    out, took = timed(lambda: src.to("flagos:1", non_blocking=True))
    assert took < DELAY / 2 and not stream.query()
    assert F.current_stream(0).query()  # device 0 is not involved
    assert torch.equal(out.cpu(), src)


def test_many_small_async_copies_keep_their_order():
    dst = torch.zeros(64, device="flagos")
    for i in range(32):
        dst.copy_(torch.full((64,), float(i)).pin_memory(), non_blocking=True)
    F.synchronize()
    assert dst.cpu().eq(31).all()
