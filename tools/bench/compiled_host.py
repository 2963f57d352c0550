"""python -m tools.bench.compiled_host [--repeats N] [--md F]

Compiled training steps on the host plugin against native compiled CPU, in
the same process (timing.py: interleaved repeats, medians, per-repeat ratios):
an MLP and a two-block transformer, each torch.compile'd (default Inductor) on
both sides, forward + backward + AdamW per step. The flagos side runs
Inductor's CPU code on zero-copy views of flagos memory (docs/compile.md), so
the ratio is the cost of that path: stream ordering, the views and the
re-labelled results. Target: ≤ 1.10× native.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import torch

import torch_fl  # noqa: F401  (the flagos device)
from tools.bench import machine, report, timing

TARGET = 1.10


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024),
                               torch.nn.GELU(), torch.nn.Linear(1024, 256))


CASES = [
    ("MLP 256-1024-1024-256, batch 64", _mlp, (64, 256)),
    ("transformer 2 blocks d128, batch 4 x 64", lambda: torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True, norm_first=True), 2,
        enable_nested_tensor=False), (4, 64, 128)),
]


def step_workload(build, shape: tuple, steps: int = 5):
    torch.manual_seed(0)
    base = build()

    def make(device: str):
        model = copy.deepcopy(base).to(device)
        compiled = torch.compile(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(1)).to(device)

        def run():
            for _ in range(steps):
                compiled(x).square().mean().backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
        run()  # compiles
        return run, steps
    return make


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.compiled_host")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--md", type=Path)
    args = parser.parse_args(argv)
    m = machine.describe()
    lines = [f"Date {m['date']}; {m['cpu']}, {m['cores']} cores; torch {m['torch']}; torch_fl {m['torch_fl']} "
             f"({m['commit']}), plugin {m['plugin']}.", "",
             "| Case (compiled, forward + backward + AdamW) | cpu ms/step | flagos ms/step | flagos / cpu | target |",
             "|---|---:|---:|---:|---|"]
    failed = 0
    for name, build, shape in CASES:
        r = timing.compare(step_workload(build, shape), args.repeats)
        ok = r["ratio"] <= TARGET
        failed += not ok
        lines.append(f"| {name} | {r['cpu_s'] * 1e3:.3g} | {r['flagos_s'] * 1e3:.3g} | {r['ratio']:.3f}× | "
                     f"≤ {TARGET}× {'pass' if ok else 'FAIL'} |")
        print(f"  {name}: {r['ratio']:.3f}x", file=sys.stderr, flush=True)
    report.emit("\n".join(lines), args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
