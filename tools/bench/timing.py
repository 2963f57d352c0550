"""Interleaved timing of one workload on native CPU and on flagos.

Each repeat times the CPU side and the flagos side back to back (alternating
which goes first), so load from other processes hits both alike; the ratio is
the median of the per-repeat ratios, and each time the median of its repeats.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch

# A workload: given a device, returns a callable that runs one timed block and
# the number of units (ops or steps) that block performs.
Workload = Callable[[str], tuple[Callable[[], None], int]]


def _sync(device: str) -> None:
    if device != "cpu":
        torch.flagos.synchronize()


def _time_block(run: Callable[[], None], device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    run()
    _sync(device)
    return time.perf_counter() - start


def compare(workload: Workload, repeats: int, warmup: int = 1) -> dict:
    """Seconds per unit on each device (medians) and the flagos/cpu ratio."""
    blocks = {dev: workload(dev) for dev in ("cpu", "flagos")}
    for dev, (run, _) in blocks.items():
        for _ in range(warmup):
            _time_block(run, dev)
    per_unit: dict[str, list[float]] = {"cpu": [], "flagos": []}
    for r in range(repeats):
        order = ("cpu", "flagos") if r % 2 == 0 else ("flagos", "cpu")
        for dev in order:
            run, units = blocks[dev]
            per_unit[dev].append(_time_block(run, dev) / units)
    ratios = [f / c for f, c in zip(per_unit["flagos"], per_unit["cpu"])]
    return {
        "cpu_s": statistics.median(per_unit["cpu"]),
        "flagos_s": statistics.median(per_unit["flagos"]),
        "ratio": statistics.median(ratios),
        "repeats": repeats,
    }
