"""Recurrent layers on flagos: torch calls the fused LSTM and GRU cells for
every PrivateUse1 input, which the core composes from routed operators.
Forward and backward match the CPU."""

import pytest
import torch

MODULES = {
    "LSTM": lambda: torch.nn.LSTM(4, 5, num_layers=2, bidirectional=True),
    "GRU": lambda: torch.nn.GRU(4, 5, num_layers=2),
    "LSTMCell": lambda: torch.nn.LSTMCell(4, 5),
    "GRUCell": lambda: torch.nn.GRUCell(4, 5),
    "LSTM_no_bias": lambda: torch.nn.LSTM(4, 5, bias=False),
    "GRU_batch_first": lambda: torch.nn.GRU(4, 5, batch_first=True),
}


def first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", MODULES)
def test_forward_and_backward_match_the_cpu(name):
    torch.manual_seed(0)
    cpu = MODULES[name]()
    dev = MODULES[name]().to("flagos")
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(2, 4) if name.endswith("Cell") else torch.randn(3, 2, 4)
    xd = x.to("flagos").requires_grad_()
    x.requires_grad_()
    out_cpu, out_dev = first(cpu(x)), first(dev(xd))
    torch.testing.assert_close(out_dev.cpu(), out_cpu, atol=1e-5, rtol=1e-4)
    out_cpu.square().sum().backward()
    out_dev.square().sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad, atol=1e-5, rtol=1e-4)
    for (n, p_cpu), p_dev in zip(cpu.named_parameters(), dev.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p_cpu.grad, atol=1e-5, rtol=1e-4, msg=n)


def test_lstm_state_carries_over():
    torch.manual_seed(0)
    cpu = torch.nn.LSTM(3, 4)
    dev = torch.nn.LSTM(3, 4).to("flagos")
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(5, 1, 3)
    _, (h, c) = cpu(x)
    _, (hd, cd) = dev(x.to("flagos"))
    out, _ = cpu(x, (h, c))
    outd, _ = dev(x.to("flagos"), (hd, cd))
    torch.testing.assert_close(outd.cpu(), out, atol=1e-5, rtol=1e-4)


def test_double_backward_through_an_lstm_cell():
    # With create_graph, torch differentiates the cell's composite backward.
    torch.manual_seed(0)
    cell = torch.nn.LSTMCell(3, 3).to("flagos")
    x = torch.randn(2, 3, device="flagos", requires_grad=True)
    h, _ = cell(x)
    (g,) = torch.autograd.grad(h.sum(), x, create_graph=True)
    g.sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad.cpu()).all()


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_with_host_lengths_match_the_cpu(enforce_sorted):
    # torch requires the lengths (and a PackedSequence's batch sizes) on the
    # CPU, beside data on the device, as on CUDA.
    torch.manual_seed(0)
    cpu = torch.nn.LSTM(4, 5, batch_first=True)
    dev = torch.nn.LSTM(4, 5, batch_first=True).to("flagos")
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(3, 6, 4)
    lengths = torch.tensor([6, 4, 2]) if enforce_sorted else torch.tensor([2, 6, 4])
    xd = x.to("flagos").requires_grad_()
    x.requires_grad_()
    outs = []
    for model, inp in ((cpu, x), (dev, xd)):
        packed = torch.nn.utils.rnn.pack_padded_sequence(inp, lengths, batch_first=True,
                                                         enforce_sorted=enforce_sorted)
        assert packed.batch_sizes.device.type == "cpu" and packed.data.device == inp.device
        out, _ = model(packed)
        padded, out_lengths = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        assert out_lengths.device.type == "cpu" and torch.equal(out_lengths, lengths)
        padded.square().sum().backward()
        outs.append(padded)
    torch.testing.assert_close(outs[1].cpu(), outs[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(dev.weight_hh_l0.grad.cpu(), cpu.weight_hh_l0.grad, atol=1e-5, rtol=1e-4)


def test_pack_sequence_of_device_tensors():
    seqs = [torch.randn(4, 3), torch.randn(2, 3)]
    packed = torch.nn.utils.rnn.pack_sequence([s.to("flagos") for s in seqs])
    want = torch.nn.utils.rnn.pack_sequence(seqs)
    assert packed.batch_sizes.device.type == "cpu" and torch.equal(packed.batch_sizes, want.batch_sizes)
    torch.testing.assert_close(packed.data.cpu(), want.data)
