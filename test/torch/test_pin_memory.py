"""Pinned host memory for flagos: tensor/storage pin_memory() and is_pinned(),
views and shared storages, pinned factories, the pinned cache's reuse, and
what cannot be pinned. Asynchronous copies from pinned memory are in
test_non_blocking.py."""

import inspect
import warnings

import pytest
import torch


def test_pin_memory_tensor():
    x = torch.arange(10.0)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu"
    assert p.data_ptr() != x.data_ptr()
    assert torch.equal(p, x)
    assert p.pin_memory().data_ptr() == p.data_ptr()  # already pinned: the same tensor


def test_pinned_factories():
    for t in (torch.empty(8, pin_memory=True), torch.zeros(8, pin_memory=True),
              torch.ones(2, 3, pin_memory=True), torch.empty_strided((2, 2), (1, 2), pin_memory=True)):
        assert t.is_pinned()
    assert torch.zeros(8, pin_memory=True).eq(0).all()


def test_views_of_pinned_tensors_are_pinned():
    p = torch.randn(4, 6).pin_memory()
    for v in (p[1], p[:, 2:4], p.t(), p.view(24), p.unsqueeze(0)):
        assert v.is_pinned()


def test_tensors_sharing_a_pinned_storage():
    p = torch.arange(12.0).pin_memory()
    other = torch.empty(0).set_(p.untyped_storage(), 4, (4,), (1,))
    assert other.is_pinned()
    assert other.tolist() == [4.0, 5.0, 6.0, 7.0]


# torch < 2.12 pins storages for "cuda" by default (Storage.pin_memory(device="cuda")),
# whatever the accelerator: without a CUDA driver that raises before flagos is asked.
storage_pins_for_cuda = pytest.mark.skipif(
    inspect.signature(torch.UntypedStorage.pin_memory).parameters["device"].default == "cuda"
    and not torch.cuda.is_available(),
    reason="this torch's Storage.pin_memory() pins for 'cuda' by default, and CUDA is not available")


@storage_pins_for_cuda
def test_untyped_storage_pin_memory():
    s = torch.arange(6.0).untyped_storage()
    assert not s.is_pinned()
    ps = s.pin_memory()
    assert ps.is_pinned()
    assert torch.equal(torch.empty(0).set_(ps).view(torch.float32), torch.arange(6.0))


@storage_pins_for_cuda
def test_typed_storage_pin_memory():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage deprecation
        s = torch.arange(6.0).storage()
        ps = s.pin_memory()
        assert ps.is_pinned() and not s.is_pinned()
        assert ps.tolist() == s.tolist()


def test_explicit_flagos_device_argument():
    s = torch.arange(4.0).untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the device argument is deprecated in newer torch
        assert s.pin_memory("flagos").is_pinned("flagos")


def test_pinned_blocks_are_cached():
    p = torch.empty(4096).pin_memory()
    ptr = p.data_ptr()
    del p
    q = torch.empty(4096).pin_memory()
    assert q.data_ptr() == ptr


def test_device_tensors_cannot_be_pinned():
    with pytest.raises(RuntimeError, match="pinned"):
        torch.ones(2, device="flagos").pin_memory()
    with pytest.raises(RuntimeError, match="pinned"):
        torch.empty(2, device="flagos", pin_memory=True)


def test_pinned_tensor_round_trip():
    p = torch.randn(1000).pin_memory()
    d = p.to("flagos")
    back = torch.empty(1000).pin_memory()
    back.copy_(d)
    assert torch.equal(back, p)
