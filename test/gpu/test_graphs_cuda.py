"""Graph capture on the cuda plugin (docs/graphs.md), with eager flagos as the
control: a captured training step and make_graphed_callables replay to the
eager results; a sync inside a capture is an error that leaves the device
usable. The control is eager flagos: the same kernels the graph captured."""

from __future__ import annotations

import pytest
import torch

import torch_fl  # noqa: F401

pytestmark = pytest.mark.gpu

F = torch.flagos


def _mlp(device: str) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10)).to(device)


def _train(device: str, graphed: bool, batches, targets):
    model = _mlp(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=False)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, t):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), t)
        loss.backward()
        opt.step()
        return loss

    if not graphed:
        return [step(x.to(device), t.to(device)).item() for x, t in zip(batches, targets)], model
    static_x, static_t = batches[0].to(device), targets[0].to(device)
    side = F.Stream()
    side.wait_stream(F.current_stream())
    with F.stream(side):  # warm-up: the first step makes the momentum buffers
        losses = [step(static_x, static_t).item()]
    F.current_stream().wait_stream(side)
    g = F.FlagosGraph()
    opt.zero_grad(set_to_none=True)
    with F.graph(g):
        static_loss = step(static_x, static_t)
    for x, t in zip(batches[1:], targets[1:]):
        static_x.copy_(x)
        static_t.copy_(t)
        g.replay()
        losses.append(static_loss.item())
    return losses, model


def test_a_captured_training_step_replays_like_eager():
    torch.manual_seed(1)
    batches = [torch.randn(32, 64) for _ in range(8)]
    targets = [torch.randint(0, 10, (32,)) for _ in range(8)]
    eager_losses, eager = _train("flagos", False, batches, targets)
    graph_losses, graphed = _train("flagos", True, batches, targets)
    assert eager_losses[0] != eager_losses[-1]
    torch.testing.assert_close(torch.tensor(graph_losses), torch.tensor(eager_losses), rtol=1e-4, atol=1e-5)
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        torch.testing.assert_close(pg.detach().cpu(), pe.detach().cpu(), rtol=1e-4, atol=1e-5)


def test_make_graphed_callables_matches_eager_grads():
    eager, graphed = _mlp("flagos"), _mlp("flagos")
    graphed = F.make_graphed_callables(graphed, (torch.randn(16, 64, device="flagos"),))
    for _ in range(3):
        x = torch.randn(16, 64)
        for m in (eager, graphed):
            m.zero_grad(set_to_none=True)
            m(x.to("flagos")).square().sum().backward()
        for pe, pg in zip(eager.parameters(), graphed.parameters()):
            torch.testing.assert_close(pg.grad.cpu(), pe.grad.cpu(), rtol=1e-4, atol=1e-5)


def test_a_sync_inside_capture_is_an_error_and_the_device_stays_usable():
    x = torch.ones(1024, device="flagos")
    g = F.FlagosGraph()
    with pytest.raises(RuntimeError, match=r"\[flagos\].*STREAM_CAPTURE"):
        with F.graph(g):
            y = x * 2
            F.synchronize()
    assert not F.is_current_stream_capturing()
    with pytest.raises(RuntimeError):  # torch's CUDA copy or the plugin's, whichever sees it first
        with F.graph(F.FlagosGraph()):
            (x * 2).sum().item()
    assert not F.is_current_stream_capturing()
    assert (x * 3).sum().item() == 3072.0
    g2 = F.FlagosGraph()
    with F.graph(g2):
        z = x * 4
    g2.replay()
    assert z.sum().item() == 4096.0


def test_random_operators_are_refused_in_a_capture():
    g = F.FlagosGraph()
    with pytest.raises(RuntimeError, match="random operators cannot be captured"):
        with F.graph(g):
            torch.rand(8, device="flagos")
    assert (torch.ones(4, device="flagos") + 1).sum().item() == 8.0


@pytest.mark.parametrize("mask", [False, True], ids=["causal", "masked"])
def test_fused_attention_without_dropout_is_captured(mask):
    # The fused kernels are tagged seeded but draw only for dropout_p > 0: an
    # inference forward (dropout 0) must capture and replay.
    q = torch.randn(2, 12, 32, 64, device="flagos", dtype=torch.float16)
    m = torch.zeros(2, 1, 32, 32, device="flagos", dtype=torch.float16) if mask else None
    attend = lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=m, is_causal=not mask)
    expected = attend()
    g = F.FlagosGraph()
    with F.graph(g):
        out = attend()
    q.copy_(torch.randn_like(q))
    expected = attend()
    g.replay()
    torch.testing.assert_close(out, expected)
    with pytest.raises(RuntimeError, match="random operators cannot be captured"):
        with F.graph(F.FlagosGraph()):
            torch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.1, is_causal=True)
