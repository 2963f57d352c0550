"""Strided nested tensors on flagos (core/aten/nested_fallback.cpp): built
from flagos tensors, or by nn.TransformerEncoder's inference fast path from a
padding mask, they run torch's CPU nested kernels on host copies and answer as
on the CPU, views and in-place writes included. Sparse tensors, which flagos
never holds, are refused in one [flagos] line that leaves the process usable."""

import pytest
import torch

A, B = torch.randn(2, 3), torch.randn(4, 3)


def padded(nt: torch.Tensor) -> torch.Tensor:
    return nt.to_padded_tensor(0.0).cpu()


@pytest.fixture
def pair():
    """The same nested tensor on the CPU and on flagos."""
    return torch.nested.nested_tensor([A, B]), torch.nested.nested_tensor([A, B], device="flagos")


def test_a_nested_tensor_lives_on_flagos_and_computes_as_on_the_cpu(pair):
    cpu, dev = pair
    out = (dev * 2 + 1).sin()
    assert out.is_nested and out.device.type == "flagos"
    assert torch.equal(padded(out), padded((cpu * 2 + 1).sin()))
    assert torch.equal(padded(torch.nn.functional.linear(dev, torch.ones(5, 3, device="flagos"))),
                       padded(torch.nn.functional.linear(cpu, torch.ones(5, 3))))


def test_moving_to_the_cpu_and_metadata_stay_on_the_cpu(pair):
    cpu, dev = pair
    back = dev.cpu()
    assert back.device.type == "cpu" and torch.equal(padded(back), padded(cpu))
    assert dev._nested_tensor_size().device.type == "cpu"
    assert dev._nested_tensor_size().tolist() == [[2, 3], [4, 3]]


def test_unbind_gives_views_that_write_through_and_in_place_ops_write_back(pair):
    cpu, dev = pair
    parts = dev.unbind()
    assert [p.device.type for p in parts] == ["flagos", "flagos"]
    assert torch.equal(parts[0].cpu(), A)
    parts[1].zero_()
    assert torch.equal(padded(dev)[1], torch.zeros(4, 3))
    dev.mul_(3)
    assert torch.equal(padded(dev)[0, :2], A * 3)


def test_gradients_flow_through_nested_operators():
    x = torch.nested.nested_tensor([A, B], device="flagos", requires_grad=True)
    (x * x).to_padded_tensor(0.0).sum().backward()
    assert torch.allclose(padded(x.grad), padded(torch.nested.nested_tensor([2 * A, 2 * B])))


def test_transformer_encoder_inference_with_a_padding_mask_matches_the_cpu():
    # In eval mode with a key padding mask, nn.TransformerEncoder packs the
    # batch into a nested tensor and runs the fused encoder layer on it.
    torch.manual_seed(0)
    encoder = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 2).eval()
    x = torch.randn(2, 5, 16)
    mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():
        expected = encoder(x, src_key_padding_mask=mask)
        out = encoder.to("flagos")(x.to("flagos"), src_key_padding_mask=mask.to("flagos"))
    assert out.device.type == "flagos" and not out.is_nested
    torch.testing.assert_close(out.cpu(), expected)


@pytest.mark.parametrize("make,layout", [
    (lambda: torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2)).to("flagos"),
     "sparse COO"),
    (lambda: torch.eye(3).to_sparse_csr().to("flagos")._nnz(), "compressed sparse"),
], ids=["coo", "csr"])
def test_a_sparse_tensor_moved_to_flagos_is_one_clear_error(make, layout):
    with pytest.raises(RuntimeError, match=rf"^\[flagos\] aten::\w+: flagos tensors are plain strided ones, not "
                                           rf"{layout} \(docs/platforms/README.md, \"Layouts\"\)"):
        make()
    assert (torch.ones(2, device="flagos") + 1).tolist() == [2.0, 2.0]


def test_a_nested_tensor_saves_and_loads_onto_flagos(pair, tmp_path):
    cpu, dev = pair
    torch.save({"nested": dev}, tmp_path / "nested.pt")
    loaded = torch.load(tmp_path / "nested.pt")["nested"]
    assert loaded.is_nested and loaded.device.type == "flagos"
    assert torch.equal(padded(loaded), padded(cpu))


def test_attention_over_nested_sequences_matches_the_cpu():
    q = torch.nested.nested_tensor([torch.randn(2, 3, 8), torch.randn(2, 5, 8)])
    expected = torch.nn.functional.scaled_dot_product_attention(q, q, q)
    d = q.to("flagos")
    out = torch.nn.functional.scaled_dot_product_attention(d, d, d)
    assert out.is_nested and out.device.type == "flagos"
    torch.testing.assert_close(padded(out), padded(expected))
