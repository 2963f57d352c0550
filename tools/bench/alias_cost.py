"""python -m tools.bench.alias_cost [--rounds R] [--md PATH]

Host time per call with FLAGOS_ALIAS_CUDA on and off (docs/compat.md): a
tiny op, which no alias entry point sees, and the entry points the alias
wraps (a factory, Tensor.to, torch.device), called with "flagos" on both
sides and with "cuda" where the alias is on. Each side runs in its own
process (the alias is installed at import); the processes alternate R
rounds and each figure is the median over rounds of the median of repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CALLS, REPEATS = 2000, 15


def _cases(device: str) -> dict:
    import torch

    a, b = torch.ones(1, device="flagos"), torch.ones(1, device="flagos")
    return {
        "torch.add(a, b), 1 element": lambda: torch.add(a, b),
        "a.add_(b), 1 element": lambda: a.add_(b),
        f'torch.empty(4, device="{device}")': lambda: torch.empty(4, device=device),
        f'a.to("{device}") (already there)': lambda: a.to(device),
        f'torch.device("{device}")': lambda: torch.device(device),
    }


def _child(device: str) -> None:
    import torch

    import torch_fl  # noqa: F401

    out = {}
    for name, call in _cases(device).items():
        times = []
        for _ in range(REPEATS):
            torch.flagos.synchronize()
            start = time.perf_counter()
            for _ in range(CALLS):
                call()
            times.append((time.perf_counter() - start) / CALLS * 1e6)
        out[name] = statistics.median(times)
    print(json.dumps(out))


def _run(alias: str, device: str) -> dict:
    env = dict(os.environ, FLAGOS_ALIAS_CUDA=alias)
    got = subprocess.run([sys.executable, "-m", "tools.bench.alias_cost", "--child", device], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(got.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--md")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return _child(args.child)
    sides = {"off": ("0", "flagos"), "on": ("1", "flagos"), "on, cuda": ("1", "cuda")}
    rounds = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, (alias, device) in sides.items():
            rounds[side].append(_run(alias, device))
    med = {side: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for side, runs in rounds.items()}
    lines = ["| call | alias off (µs) | alias on (µs) | on − off (µs) | alias on, \"cuda\" (µs) |",
             "|---|---|---|---|---|"]
    for (name, off), on, cuda in zip(med["off"].items(), med["on"].values(), med["on, cuda"].values()):
        lines.append(f"| {name} | {off:.2f} | {on:.2f} | {on - off:+.2f} | {cuda:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.md:
        Path(args.md).write_text(table + "\n")


if __name__ == "__main__":
    main()
