"""DataLoader with pin_memory=True for flagos: batches come out pinned and
correct, with structured batches and worker processes, and move to the
device with non_blocking copies."""

import collections

import pytest
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

# torch >= 2.12 ignores pin_memory_device (pinning follows the current
# accelerator, which is flagos) and says so; the argument stays the portable spelling.
pytestmark = pytest.mark.filterwarnings("ignore:pin_memory_device is deprecated:UserWarning")

Pair = collections.namedtuple("Pair", "x y")


class Structured(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": torch.full((3,), float(i)), "pair": Pair(torch.tensor(i), [torch.ones(2) * i])}


def loader(dataset, **kwargs):
    return DataLoader(dataset, batch_size=4, pin_memory=True, pin_memory_device="flagos", **kwargs)


def test_batches_are_pinned_and_correct():
    data = torch.arange(20.0).reshape(10, 2)
    batches = list(loader(TensorDataset(data, torch.arange(10))))
    assert len(batches) == 3
    for x, y in batches:
        assert x.is_pinned() and y.is_pinned()
    assert torch.equal(torch.cat([x for x, _ in batches]), data)


def test_default_pin_memory_device_is_flagos():
    batches = list(DataLoader(TensorDataset(torch.arange(6.0)), batch_size=2, pin_memory=True))
    assert all(x.is_pinned() for (x,) in batches)


def test_structured_batches_are_pinned():
    for batch in loader(Structured()):
        assert batch["x"].is_pinned()
        assert isinstance(batch["pair"], Pair)
        assert batch["pair"].x.is_pinned() and batch["pair"].y[0].is_pinned()


def test_workers_and_pinning():
    data = torch.arange(40.0).reshape(20, 2)
    seen = torch.cat([x for (x,) in loader(TensorDataset(data), num_workers=2)])
    assert torch.equal(seen, data)


def test_batches_move_to_the_device_asynchronously():
    data = torch.randn(16, 8)
    model = torch.nn.Linear(8, 1).flagos()
    outputs = []
    for (x,) in loader(TensorDataset(data)):
        x = x.to("flagos", non_blocking=True)
        outputs.append(model(x))
    result = torch.cat(outputs).cpu()
    expected = data @ model.weight.detach().cpu().t() + model.bias.detach().cpu()
    torch.testing.assert_close(result, expected)
