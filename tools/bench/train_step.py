"""A small training step: forward, backward and torch.optim.AdamW step, with
the models initialised identically (same seed, built on the CPU, then moved).
AdamW keeps its per-device default (foreach on flagos, a per-tensor loop on
the CPU), which is what a user gets on each."""

from __future__ import annotations

import torch

SEED = 0


def _mlp():
    model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.GELU(), torch.nn.Linear(128, 8))
    x = torch.randn(128, 32)
    y = torch.randint(0, 8, (128,))
    return model, x, y, lambda out, y: torch.nn.functional.cross_entropy(out, y)


def _transformer_block():
    model = torch.nn.TransformerEncoderLayer(
        d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    x = torch.randn(8, 32, 64)
    y = torch.randn(8, 32, 64)
    return model, x, y, lambda out, y: (out - y).pow(2).mean()


def workload(build, steps: int, autocast: bool):
    def make(device: str):
        torch.manual_seed(SEED)
        model, x, y, loss_fn = build()
        model, x, y = model.to(device), x.to(device), y.to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def run():
            for _ in range(steps):
                with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=autocast):
                    loss = loss_fn(model(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return run, steps
    return make


CASES = [
    ("MLP 32-128-8, batch 128, fp32", workload(_mlp, 5, autocast=False)),
    ("MLP 32-128-8, batch 128, autocast bf16", workload(_mlp, 5, autocast=True)),
    ("transformer block d64 h4 ff128, 8x32 tokens, fp32", workload(_transformer_block, 3, autocast=False)),
]
