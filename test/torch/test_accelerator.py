"""torch.accelerator on flagos: it finds the device and runs its device,
stream, synchronization, capability and memory APIs on the flagos guard
and allocator (the same figures torch.flagos reports)."""

import pytest
import torch

F = torch.flagos


def test_flagos_is_the_current_accelerator():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("flagos")
    assert torch.accelerator.current_accelerator(check_available=True).type == "flagos"
    assert torch.accelerator.device_count() == F.device_count()


@pytest.mark.two_devices
def test_device_index_functions():
    start = torch.accelerator.current_device_index()
    try:
        torch.accelerator.set_device_index(1)
        assert torch.accelerator.current_device_index() == 1 == F.current_device()
        torch.accelerator.set_device_index("flagos:0")
        assert F.current_device() == 0
    finally:
        torch.accelerator.set_device_index(start)


@pytest.mark.two_devices
def test_device_index_context():
    start = torch.accelerator.current_device_index()
    with torch.accelerator.device_index(1 - start):
        assert torch.accelerator.current_device_index() == 1 - start
        assert torch.empty(1, device="flagos").device.index == 1 - start
    assert torch.accelerator.current_device_index() == start
    with torch.accelerator.device_index(None):
        assert torch.accelerator.current_device_index() == start


@pytest.mark.two_devices
def test_device_index_context_restores_after_an_exception():
    start = torch.accelerator.current_device_index()
    with pytest.raises(KeyError):
        with torch.accelerator.device_index(1 - start):
            raise KeyError("boom")
    assert torch.accelerator.current_device_index() == start


def test_invalid_device_index():
    with pytest.raises(RuntimeError, match="out of range"):
        torch.accelerator.set_device_index(F.device_count())


def test_streams():
    assert torch.accelerator.current_stream() == F.current_stream()
    s = torch.Stream(device="flagos")
    prev = torch.accelerator.current_stream()
    torch.accelerator.set_stream(s)
    try:
        assert torch.accelerator.current_stream() == s
        assert torch.accelerator.current_stream(F.current_device()) == s
    finally:
        torch.accelerator.set_stream(prev)


def test_synchronize(delay):
    s = F.Stream()
    delay(s, 0.1)
    torch.accelerator.synchronize()
    assert s.query()
    torch.accelerator.synchronize(0)
    torch.accelerator.synchronize("flagos:0")


def test_capability():
    cap = torch.accelerator.get_device_capability()
    assert torch.float32 in cap["supported_dtypes"]


def test_memory_api_agrees_with_torch_flagos():
    x = torch.empty(1 << 20, dtype=torch.uint8, device="flagos:0")
    assert torch.accelerator.memory_allocated(0) == F.memory_allocated(0) > 0
    assert torch.accelerator.memory_reserved(0) == F.memory_reserved(0)
    assert torch.accelerator.memory_stats(0)["allocated_bytes.all.current"] == F.memory_allocated(0)
    assert tuple(torch.accelerator.get_memory_info(0)) == F.mem_get_info(0)
    del x
    torch.accelerator.empty_cache()
    torch.accelerator.reset_peak_memory_stats(0)
    assert torch.accelerator.max_memory_allocated(0) == F.memory_allocated(0)


def test_memory_api_uses_the_current_device():
    with torch.accelerator.device_index(0):
        assert torch.accelerator.memory_allocated() == F.memory_allocated(0)
