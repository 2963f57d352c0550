"""torch.save / torch.load of flagos tensors and modules: location tags,
restore locations, map_location in its every form, shared storages, the
legacy format, weights_only loading."""

import io

import pytest
import torch


def round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def test_location_tag_names_the_device():
    assert torch.serialization.location_tag(torch.ones(1, device="flagos:0").untyped_storage()) == "flagos:0"


@pytest.mark.two_devices
def test_location_tag_of_the_second_device():
    assert torch.serialization.location_tag(torch.ones(1, device="flagos:1").untyped_storage()) == "flagos:1"


def test_default_restore_location_moves_to_flagos():
    cpu = torch.arange(3.0).untyped_storage()
    restored = torch.serialization.default_restore_location(cpu, "flagos:0")
    assert restored.device == torch.device("flagos", 0)
    assert restored.cpu().tolist() == cpu.tolist()


@pytest.mark.parametrize("device", ["flagos:0", pytest.param("flagos:1", marks=pytest.mark.two_devices)])
def test_save_load_keeps_the_device(device):
    x = torch.arange(12.0).reshape(3, 4).to(device)
    y = round_trip(x)
    assert y.device == torch.device(device)
    assert torch.equal(y.cpu(), x.cpu())


@pytest.mark.parametrize("map_location,expected", [
    ("cpu", "cpu"), (torch.device("cpu"), "cpu"), ("flagos:0", "flagos"),
    (torch.device("flagos", 0), "flagos"), ({"flagos:0": "cpu"}, "cpu"),
    (lambda storage, loc: storage, "cpu"),  # keeps the CPU copy torch.load hands over
], ids=["str_cpu", "device_cpu", "str_flagos", "device_flagos", "dict", "callable"])
def test_map_location(map_location, expected):
    x = torch.randn(5, device="flagos:0")
    y = round_trip(x, map_location=map_location)
    assert y.device.type == expected
    assert torch.equal(y.cpu(), x.cpu())


@pytest.mark.two_devices
def test_map_location_between_flagos_devices():
    x = torch.randn(5, device="flagos:1")
    assert round_trip(x, map_location="flagos:0").device == torch.device("flagos", 0)
    assert round_trip(x, map_location={"flagos:1": "flagos:0"}).device == torch.device("flagos", 0)
    y = torch.randn(5, device="flagos:0")
    assert round_trip(y, map_location="flagos:1").device == torch.device("flagos", 1)


def test_cpu_checkpoint_maps_onto_flagos():
    x = torch.randn(4)
    y = round_trip(x, map_location="flagos")
    assert y.device.type == "flagos"
    assert torch.equal(y.cpu(), x)


def test_views_keep_sharing_their_storage():
    base = torch.arange(10.0, device="flagos")
    a, b = base[2:5], base[4:9]
    la, lb = round_trip([a, b])
    assert la.untyped_storage().data_ptr() == lb.untyped_storage().data_ptr()
    la[2] = -1.0  # element 4 of the base, seen by both
    assert lb[0].item() == -1.0


def test_module_state_dict_round_trip(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).flagos()
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    state = torch.load(path, weights_only=True)
    assert all(v.device.type == "flagos" for v in state.values())
    cpu_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    cpu_model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    for (k, v), (_, w) in zip(model.state_dict().items(), cpu_model.state_dict().items()):
        assert torch.equal(v.cpu(), w), k


def test_legacy_format():
    x = torch.arange(6.0, device="flagos").reshape(2, 3)
    buf = io.BytesIO()
    torch.save(x, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    y = torch.load(buf, weights_only=False)
    assert y.device.type == "flagos"
    assert torch.equal(y.cpu(), x.cpu())


def test_dtypes_and_requires_grad_survive():
    items = {str(dt): torch.ones(3, dtype=dt, device="flagos") for dt in
             (torch.float16, torch.bfloat16, torch.int8, torch.bool, torch.complex64)}
    items["param"] = torch.nn.Parameter(torch.randn(2, device="flagos"))
    loaded = round_trip(items, weights_only=False)
    for key, value in items.items():
        assert loaded[key].dtype == value.dtype and loaded[key].device.type == "flagos"
        assert torch.equal(loaded[key].detach().cpu(), value.detach().cpu())
    assert isinstance(loaded["param"], torch.nn.Parameter) and loaded["param"].requires_grad
