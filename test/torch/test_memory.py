"""The caching device allocator as torch sees it: block reuse, the figures of
torch.flagos.memory_* and torch.accelerator.memory_* (the same numbers),
peaks and resets, empty_cache, multi-device isolation, leaks; in subprocesses:
FLAGOS_USE_CACHING_ALLOCATOR=0 and out-of-memory on a small host device
(memory_mb), where the cache is freed, the allocation retried, and
torch.OutOfMemoryError raised with the figures, the device still usable."""

import gc
import textwrap

import pytest
import torch

F = torch.flagos
MiB = 1 << 20


def stat(key, device=0):
    return F.memory_stats(device).get(key, 0)


@pytest.fixture
def clean():
    """Every cached block returned first, so figures start from live tensors only."""
    gc.collect()
    F.empty_cache()


def test_allocation_is_counted_and_returned(clean):
    base = F.memory_allocated(0)
    x = torch.empty(MiB, dtype=torch.uint8, device="flagos:0")
    assert F.memory_allocated(0) == base + MiB
    assert F.memory_reserved(0) >= F.memory_allocated(0)
    assert stat("allocation.all.current") >= 1
    del x
    assert F.memory_allocated(0) == base


def test_sizes_are_rounded_to_blocks(clean):
    base = F.memory_allocated(0)
    x = torch.empty(1, dtype=torch.uint8, device="flagos:0")
    assert F.memory_allocated(0) - base == 512
    assert stat("requested_bytes.all.current") >= 1
    del x


def test_freed_block_is_reused_without_a_plugin_call(clean):
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="flagos:0")
    ptr = x.data_ptr()
    del x
    device_allocs = stat("num_device_alloc")
    y = torch.empty(3 * MiB, dtype=torch.uint8, device="flagos:0")
    assert y.data_ptr() == ptr
    assert stat("num_device_alloc") == device_allocs


def test_small_tensors_share_a_segment(clean):
    device_allocs = stat("num_device_alloc")
    xs = [torch.empty(1000, device="flagos:0") for _ in range(50)]
    assert stat("num_device_alloc") - device_allocs <= 1  # one 2 MiB segment holds them all
    assert len({x.data_ptr() for x in xs}) == 50
    del xs


def test_torch_accelerator_reports_the_same_figures(clean):
    x = torch.empty(5 * MiB, dtype=torch.uint8, device="flagos:0")
    assert torch.accelerator.memory_allocated(0) == F.memory_allocated(0)
    assert torch.accelerator.memory_reserved(0) == F.memory_reserved(0)
    assert torch.accelerator.max_memory_allocated(0) == F.max_memory_allocated(0)
    assert torch.accelerator.max_memory_reserved(0) == F.max_memory_reserved(0)
    assert torch.accelerator.memory_stats(0) == F.memory_stats(0)
    del x


def test_memory_stats_has_the_cuda_keys():
    stats = F.memory_stats()
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
                "active_bytes.all.current", "requested_bytes.all.current", "segment.all.current",
                "allocation.large_pool.current", "allocation.small_pool.current",
                "num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"):
        assert key in stats, key


def test_peak_and_reset(clean):
    F.reset_peak_memory_stats(0)
    base = F.memory_allocated(0)
    x = torch.empty(8 * MiB, dtype=torch.uint8, device="flagos:0")
    del x
    assert F.max_memory_allocated(0) >= base + 8 * MiB
    assert F.max_memory_reserved(0) >= F.max_memory_allocated(0)
    F.reset_peak_memory_stats(0)
    assert F.max_memory_allocated(0) == F.memory_allocated(0)
    torch.accelerator.reset_peak_memory_stats(0)
    assert torch.accelerator.max_memory_allocated(0) == F.memory_allocated(0)


def test_reset_accumulated_stats(clean):
    torch.empty(MiB, device="flagos:0")
    assert stat("allocation.all.allocated") > 0
    F.reset_accumulated_memory_stats(0)
    assert stat("allocation.all.allocated") == 0
    assert stat("allocation.all.freed") == 0
    torch.accelerator.reset_accumulated_memory_stats(0)
    assert stat("num_device_alloc") == 0


def test_empty_cache_returns_unused_segments(clean):
    x = torch.empty(12 * MiB, dtype=torch.uint8, device="flagos:0")
    del x
    reserved = F.memory_reserved(0)
    assert reserved >= 12 * MiB + F.memory_allocated(0)
    frees = stat("num_device_free")
    F.empty_cache()
    assert F.memory_reserved(0) <= reserved - 12 * MiB
    assert stat("num_device_free") > frees
    torch.accelerator.empty_cache()  # the same operation


def test_empty_cache_keeps_live_tensors(clean):
    x = torch.arange(1000.0, device="flagos:0")
    F.empty_cache()
    assert x.cpu().sum().item() == sum(range(1000))


def test_mem_get_info_sees_device_allocations(clean):
    free_before, total = F.mem_get_info(0)
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="flagos:0")
    free_after, _ = F.mem_get_info(0)
    assert free_after <= free_before - 64 * MiB
    assert total == F.get_device_properties(0).total_memory
    del x


@pytest.mark.two_devices
def test_devices_are_accounted_separately(clean):
    before0, before1 = F.memory_allocated(0), F.memory_allocated(1)
    x = torch.empty(2 * MiB, dtype=torch.uint8, device="flagos:1")
    assert F.memory_allocated(1) == before1 + 2 * MiB
    assert F.memory_allocated(0) == before0
    with F.device(1):
        assert F.memory_allocated() == before1 + 2 * MiB
    del x
    assert F.memory_allocated(1) == before1


def test_allocation_loops_do_not_leak(clean):
    base_allocated = F.memory_allocated(0)
    for _ in range(5):
        xs = [torch.randn(1000 * (i + 1), device="flagos:0") for i in range(20)]
        ys = [x * 2 for x in xs]
        del xs, ys
    assert F.memory_allocated(0) == base_allocated
    reserved = F.memory_reserved(0)
    for _ in range(5):
        xs = [torch.randn(1000 * (i + 1), device="flagos:0") for i in range(20)]
        del xs
    assert F.memory_reserved(0) == reserved  # steady state: the cache serves the loop


def test_big_and_odd_allocations(clean):
    x = torch.ones(10 * MiB // 4 + 3, device="flagos:0")  # just over 10 MiB: its own segment
    assert x.sum().item() == x.numel()
    y = torch.empty(2, 3, 32, 32, device="flagos:0", memory_format=torch.channels_last)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert torch.empty(0, device="flagos:0").data_ptr() == 0


def test_memory_summary_and_snapshot(clean):
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="flagos:0")
    summary = F.memory_summary(0)
    assert "flagos memory summary, device 0" in summary
    assert "Allocated memory" in summary and "Reserved segments" in summary
    assert "large pool" in summary and "large pool" not in F.memory_summary(0, abbreviated=True)
    segments = F.memory_snapshot(0)
    assert any(s["allocated_size"] >= 3 * MiB for s in segments)
    for s in segments:
        assert s["segment_type"] in ("small", "large")
        assert sum(b["size"] for b in s["blocks"]) == s["total_size"]
    del x


def test_memory_functions_take_every_device_form():
    assert F.memory_allocated("flagos:0") == F.memory_allocated(torch.device("flagos", 0)) == F.memory_allocated(0)


def run_script(run_flagos, body: str, **kwargs) -> None:
    """Runs `body` in a fresh process (F and MiB defined); its asserts decide."""
    run_flagos("F = torch.flagos\nMiB = 1 << 20\n" + textwrap.dedent(body), **kwargs)


def test_caching_off_hands_every_allocation_to_the_plugin(run_flagos):
    run_script(run_flagos, """
        stats = lambda k: F.memory_stats(0)[k]
        allocs = stats("num_device_alloc")
        x = torch.empty(1000, device="flagos:0")
        y = torch.empty(1000, device="flagos:0")
        assert stats("num_device_alloc") == allocs + 2
        assert F.memory_reserved(0) == F.memory_allocated(0)
        frees = stats("num_device_free")
        del x
        assert stats("num_device_free") == frees + 1
        assert F.memory_reserved(0) == F.memory_allocated(0)
        z = torch.arange(1000.0, device="flagos:0") * 2
        assert z.cpu().sum().item() == 2 * sum(range(1000))
        del y, z
        assert F.memory_reserved(0) == F.memory_allocated(0) == 0
        F.empty_cache()  # nothing cached: a no-op
    """, env={"FLAGOS_USE_CACHING_ALLOCATOR": "0",
              # On CUDA-ABI plugins the figures include torch's CUDA caching
              # allocator (outputs of kernels boxed to CUDA): its own switch.
              "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})


SMALL_DEVICE = {"memory_mb": "64"}  # host plugin option: each device has 64 MiB


@pytest.mark.host_plugin
def test_out_of_memory_frees_the_cache_and_retries(run_flagos):
    run_script(run_flagos, """
        # Fill the device with cached (freed) 12 MiB segments.
        xs = [torch.empty(12 * MiB, dtype=torch.uint8, device="flagos") for _ in range(4)]
        del xs
        assert F.memory_reserved() >= 48 * MiB and F.memory_allocated() == 0
        retries = F.memory_stats()["num_alloc_retries"]
        big = torch.empty(40 * MiB, dtype=torch.uint8, device="flagos")  # fits only without the cache
        assert F.memory_stats()["num_alloc_retries"] == retries + 1
        assert F.memory_stats()["num_ooms"] == 0
        assert F.memory_reserved() == 40 * MiB
    """, options=SMALL_DEVICE)


@pytest.mark.host_plugin
def test_out_of_memory_raises_with_figures_and_the_device_keeps_working(run_flagos):
    run_script(run_flagos, """
        keep = torch.ones(30 * MiB, dtype=torch.uint8, device="flagos")
        try:
            torch.empty(100 * MiB, dtype=torch.uint8, device="flagos")
        except torch.OutOfMemoryError as e:
            msg = str(e)
        else:
            raise AssertionError("no OutOfMemoryError")
        assert isinstance(torch.OutOfMemoryError("x"), RuntimeError)
        assert msg.startswith("[flagos] out of memory"), msg
        assert "tried to allocate 100.00 MiB" in msg, msg
        assert "34.00 MiB free of 64.00 MiB total" in msg, msg
        assert "30.00 MiB reserved by torch_fl (30.00 MiB allocated)" in msg, msg
        assert F.memory_stats()["num_ooms"] == 1
        assert F.memory_stats()["num_alloc_retries"] == 1
        assert keep[-4:].cpu().tolist() == [1, 1, 1, 1]  # old tensors intact
        y = torch.arange(1000.0, device="flagos") + 1  # new work still runs
        assert y.cpu().sum().item() == sum(range(1, 1001))
    """, options=SMALL_DEVICE)
