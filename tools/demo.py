"""`make demo`: the main job — train a small model on `flagos`, check it against the CPU.

A two-layer MLP learns to classify the outputs of a fixed random teacher network
(a synthetic but learnable task) with torch.optim.AdamW under
torch.autocast(dtype=bfloat16): once on `flagos`, then once on the CPU with the
same seed, the same initial weights, the same data and the same batch order.
PASS when training learned (the loss fell) and both runs end at the same
loss within TOLERANCE; the exit status is non-zero on FAIL.

The plugin conformance kit is separate: `python -m torch_fl conformance`.
"""

from __future__ import annotations

import sys
import time

import torch

import torch_fl

SEED = 0
FEATURES, HIDDEN, CLASSES = 32, 128, 8
SAMPLES, BATCH, STEPS = 4096, 128, 300
LR = 3e-3
# bfloat16 keeps 8 bits of mantissa (relative step 2**-8 = 0.4%); after hundreds of
# AdamW steps on two devices whose autocast policies need not match op for op,
# the final losses are expected to agree within a few such steps, not bit for bit.
TOLERANCE = 0.02
# Training must have learned something: the final loss below this share of the first.
LEARNED = 0.5


class ProgressBar:
    """One redrawn line on a terminal; in a log, a line at every quarter."""

    def __init__(self, label: str, total: int, width: int = 30):
        self.label, self.total, self.width = label, total, width
        self.tty = sys.stdout.isatty()
        self.start = time.perf_counter()
        self.quarter = -1

    def update(self, done: int, loss: float) -> None:
        quarter = 4 * done // self.total
        if not self.tty and quarter == self.quarter:
            return
        self.quarter = quarter
        filled = self.width * done // self.total
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        line = (f"{self.label:>7} [{bar}] {done:>{len(str(self.total))}}/{self.total} "
                f"loss {loss:.4f}  {elapsed:5.1f}s")
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", flush=True)

    def close(self) -> None:
        if self.tty:
            print(flush=True)


def make_task() -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and labels of the fixed random teacher, built on the CPU."""
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    w1 = torch.randn(FEATURES, HIDDEN, generator=g) / FEATURES**0.5
    w2 = torch.randn(HIDDEN, CLASSES, generator=g) / HIDDEN**0.5
    y = (torch.tanh(x @ w1) @ w2).argmax(dim=1)
    return x, y


def batch_order() -> torch.Tensor:
    """The indices of every step's batch, the same for both runs."""
    g = torch.Generator().manual_seed(SEED + 1)
    return torch.randint(0, SAMPLES, (STEPS, BATCH), generator=g)


def train(device: str, x_cpu: torch.Tensor, y_cpu: torch.Tensor, order: torch.Tensor) -> dict:
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.GELU(), torch.nn.Linear(HIDDEN, CLASSES)
    ).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    x, y = x_cpu.to(device), y_cpu.to(device)
    order = order.to(device)

    bar = ProgressBar(device, STEPS)
    losses = []
    start = time.perf_counter()
    for step in range(STEPS):
        idx = order[step]
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            logits = model(x[idx])
            loss = torch.nn.functional.cross_entropy(logits, y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        if step % 10 == 9 or step == STEPS - 1:
            bar.update(step + 1, loss.item())
    bar.close()
    seconds = time.perf_counter() - start

    with torch.no_grad():
        logits = model(x).float()
        full_loss = torch.nn.functional.cross_entropy(logits, y).item()
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    first = losses[0].item()
    last10 = torch.stack(losses[-10:]).float().mean().item()
    return {"first": first, "last10": last10, "full": full_loss, "accuracy": accuracy,
            "seconds": seconds, "param_device": str(next(model.parameters()).device)}


def main() -> int:
    info = torch_fl.plugin_info()
    print(f"torch {torch.__version__}, torch_fl {torch_fl.__version__}")
    print(f"plugin: {info['name']} {info['version']} (ABI {info['abi']}, "
          f"{info['device_count']} devices, options {info['options'] or '{}'}) from {info['path']}")
    print(f"device: flagos:{torch.flagos.current_device()} of {torch.flagos.device_count()}")
    print(f"task: MLP {FEATURES}-{HIDDEN}-{CLASSES} learning a random teacher, {SAMPLES} samples, "
          f"batch {BATCH}, {STEPS} steps, AdamW lr {LR}, autocast bfloat16\n")

    x, y = make_task()
    order = batch_order()
    runs = {dev: train(dev, x, y, order) for dev in ("flagos", "cpu")}
    fl, cpu = runs["flagos"], runs["cpu"]

    print(f"\nparameters of the two models: {fl['param_device']} and {cpu['param_device']}")
    print(f"{'':8}{'first loss':>12}{'last 10 steps':>15}{'final (all data)':>18}"
          f"{'accuracy':>10}{'time':>9}")
    for dev, r in runs.items():
        print(f"{dev:8}{r['first']:12.4f}{r['last10']:15.4f}{r['full']:18.4f}"
              f"{r['accuracy']:10.3f}{r['seconds']:8.2f}s")

    rel = abs(fl["full"] - cpu["full"]) / abs(cpu["full"])
    learned = fl["full"] < LEARNED * fl["first"]
    print(f"\nfinal loss flagos/cpu = {fl['full'] / cpu['full']:.5f}, "
          f"|difference| = {abs(fl['full'] - cpu['full']):.2e} "
          f"(relative {rel:.2e}, tolerance {TOLERANCE:.0e})")
    print(f"learned: final loss {fl['full']:.4f} < {LEARNED} x first loss {fl['first']:.4f}: {learned}")
    ok = rel <= TOLERANCE and learned and fl["param_device"].startswith("flagos")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
