"""Per-op host overhead: a tiny elementwise op, where the kernel costs almost
nothing and the time is dispatch plus whatever the flagos path adds (today: the
CPU fallback's copies to host and back)."""

from __future__ import annotations

import torch

ITERATIONS = 1000


def workload(op: str, numel: int):
    def make(device: str):
        a = torch.ones(numel, device=device)
        b = torch.ones(numel, device=device)
        if op == "add":
            def run():
                for _ in range(ITERATIONS):
                    torch.add(a, b)
        elif op == "add_":
            def run():
                for _ in range(ITERATIONS):
                    a.add_(b)
        else:
            raise ValueError(f"[flagos] unknown tiny op {op!r}")
        return run, ITERATIONS
    return make


CASES = [
    ("torch.add(a, b), 1 element", workload("add", 1)),
    ("torch.add(a, b), 16 elements", workload("add", 16)),
    ("a.add_(b), 1 element (in place)", workload("add_", 1)),
]
