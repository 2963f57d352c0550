"""Storages and the generated .flagos() methods: untyped and typed storages
on the device, their sizes after resize, copies between host and device
storages, Tensor/Module/Storage/PackedSequence .flagos(), legacy type
strings."""

import warnings

import pytest
import torch


@pytest.fixture(autouse=True)
def _quiet_typed_storage():
    # TypedStorage is deprecated upstream but still public API; its warning is noise here.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "TypedStorage is deprecated", UserWarning)
        yield


def test_untyped_storage_on_the_device():
    s = torch.UntypedStorage(16, device="flagos")
    assert s.device.type == "flagos" and s.is_flagos
    assert s.nbytes() == 16
    assert s.cpu().device.type == "cpu" and s.cpu().nbytes() == 16


def test_tensor_storage_size_and_contents():
    x = torch.arange(4.0, device="flagos")
    s = x.untyped_storage()
    assert s.nbytes() == 16
    assert s.tolist() == list(torch.arange(4.0).untyped_storage())
    assert s.data_ptr() == x.data_ptr()


def test_storage_size_after_resize():
    x = torch.arange(4.0, device="flagos")
    x.resize_(9)
    assert x.untyped_storage().nbytes() == 36
    s = x.untyped_storage()
    s.resize_(64)
    assert s.nbytes() == 64
    assert torch.equal(x[:4].cpu(), torch.arange(4.0))  # contents kept
    s.resize_(0)
    assert s.nbytes() == 0


def test_storage_copy_between_host_and_device():
    host = torch.arange(8, dtype=torch.uint8).untyped_storage()
    dev = torch.UntypedStorage(8, device="flagos")
    dev.copy_(host)
    assert dev.tolist() == list(range(8))
    back = torch.UntypedStorage(8)
    back.copy_(dev)
    assert back.tolist() == list(range(8))
    dev.fill_(3)
    assert dev.tolist() == [3] * 8


def test_storage_flagos_methods():
    s = torch.arange(3.0).untyped_storage()
    d = s.flagos()
    assert d.is_flagos and d.device.type == "flagos"
    assert d.flagos() is d or d.flagos().data_ptr() == d.data_ptr()
    assert d.cpu().tolist() == s.tolist()


@pytest.mark.two_devices
def test_storage_flagos_to_a_chosen_device():
    d = torch.arange(3.0).untyped_storage().flagos(1)
    assert d.device == torch.device("flagos", 1)


def test_typed_storage():
    t = torch.arange(5.0, device="flagos").storage()
    assert isinstance(t, torch.TypedStorage)
    assert t.device.type == "flagos" and t.is_flagos
    assert t.size() == 5 and t.dtype == torch.float32
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    host = torch.TypedStorage([1.0, 2.0])
    dev = host.flagos()
    assert dev.is_flagos and dev.tolist() == [1.0, 2.0]
    assert dev.cpu().tolist() == [1.0, 2.0]


def test_tensor_over_a_device_storage():
    s = torch.arange(6.0, device="flagos").untyped_storage()
    t = torch.empty(0, device="flagos").set_(s, 0, (2, 3), (3, 1))
    assert t.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    t.mul_(2)
    assert torch.empty(0, device="flagos").set_(s).cpu().tolist()[5] == 10.0


def test_tensor_flagos_methods():
    x = torch.arange(3.0)
    y = x.flagos()
    assert y.is_flagos and not x.is_flagos
    assert y.device == torch.device("flagos", torch.flagos.current_device())
    assert y.flagos() is y  # already there: no copy
    assert torch.equal(y.cpu(), x)


@pytest.mark.two_devices
def test_tensor_flagos_to_a_chosen_device():
    assert torch.ones(2).flagos(1).device == torch.device("flagos", 1)
    assert torch.ones(2).flagos("flagos:1").device == torch.device("flagos", 1)


def test_module_flagos():
    m = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    assert m.flagos() is m
    assert all(p.is_flagos for p in m.parameters())
    assert all(b.is_flagos for b in m.buffers())
    out = m.eval()(torch.randn(4, 2, device="flagos"))
    assert out.device.type == "flagos"


def test_packed_sequence_flagos():
    seq = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(3, 2, 4), [3, 2])
    on_device = seq.flagos()
    assert on_device.is_flagos and on_device.data.device.type == "flagos"
    assert torch.equal(on_device.data.cpu(), seq.data)


def test_legacy_type_strings():
    assert torch.ones(1, device="flagos").type() == "torch.flagos.FloatTensor"
    assert torch.ones(1, dtype=torch.int64, device="flagos").type() == "torch.flagos.LongTensor"
