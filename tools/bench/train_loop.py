"""python -m tools.bench.train_loop DEVICE [--seconds S] [--dry-run]

Runs the GPT-2-small training step of tools.bench.gpu (c) (batch 8 x 512,
bf16 autocast, AdamW) on DEVICE for S seconds, one step at a time, after a
warm-up, and times nothing: the workload tools/bench/perf_profile.py samples
from outside, so that the host cost of flagos shows where (c) pays it, in
the step's own mix of operators and with its cache pressure.

A process of its own per device: in a process that imports torch_fl, the
autograd engine asserts on native CUDA tensors' backward
(tools/bench/gpu_train_split.py), so torch_fl is imported for flagos only.
Its last stderr line says how many steps ran: "train: N calls on DEVICE in S s".
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from tools.bench.perf_control import PerfControl


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("device")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--dry-run", action="store_true", help="a 2-layer GPT-2 of width 64, batch 2 x 32")
    parser.add_argument("--perf-control", metavar="CTL,ACK", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.device == "flagos":
        import torch_fl  # noqa: F401
    from tools.bench import gpt2, timing
    from tools.bench.gpu_train_split import BATCH, DRY, SEQ

    batch, seq = DRY[:2] if args.dry_run else (BATCH, SEQ)
    run, _ = gpt2.train_step(gpt2.build(gpt2.config(args.dry_run)), batch, seq, 1)(args.device)
    for _ in range(3):  # allocator, kernels, optimizer state
        run()
    timing.sync(args.device)
    perf = PerfControl(args.perf_control)
    perf.command("enable")
    end, n = time.perf_counter() + args.seconds, 0
    while time.perf_counter() < end:
        run()
        timing.sync(args.device)
        n += 1
    perf.command("disable")
    print(f"train: {n} calls on {args.device} in {args.seconds:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
