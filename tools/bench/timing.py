"""Interleaved timing of one workload on a native device and on flagos.

Each repeat times the native side and the flagos side back to back
(alternating which goes first), so load from other processes hits both alike;
the ratio is the median of the per-repeat ratios, and each time the median of
its repeats. The native side is the CPU for the host baselines and CUDA on a
GPU machine (tools/bench/gpu.py).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch

# A workload: given a device, returns a callable that runs one timed block and
# the number of units (ops or steps) that block performs.
Workload = Callable[[str], tuple[Callable[[], None], int]]
# A timer: seconds one block takes on a device.
Timer = Callable[[Callable[[], None], str], float]


def sync(device: str) -> None:
    if device != "cpu":
        torch.get_device_module(device).synchronize()


def wall_clock(run: Callable[[], None], device: str) -> float:
    """Host time from an idle device to the block's last kernel finishing."""
    sync(device)
    start = time.perf_counter()
    run()
    sync(device)
    return time.perf_counter() - start


def device_events(run: Callable[[], None], device: str) -> float:
    """Device time between two timing events around the block, on the
    current stream (kernel time without the host's launch latency); the CPU
    has no events, so there it is the wall clock."""
    if device == "cpu":
        return wall_clock(run, device)
    start = torch.Event(device=device, enable_timing=True)
    end = torch.Event(device=device, enable_timing=True)
    sync(device)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def compare(workload: Workload, repeats: int, warmup: int = 1,
            devices: tuple[str, str] = ("cpu", "flagos"), timer: Timer = wall_clock) -> dict:
    """Seconds per unit on each device (medians, keyed "<device>_s") and the
    ratio second/first (flagos/native)."""
    native, other = devices
    blocks = {dev: workload(dev) for dev in devices}
    for dev, (run, _) in blocks.items():
        for _ in range(warmup):
            timer(run, dev)
    per_unit: dict[str, list[float]] = {dev: [] for dev in devices}
    for r in range(repeats):
        order = devices if r % 2 == 0 else devices[::-1]
        for dev in order:
            run, units = blocks[dev]
            per_unit[dev].append(timer(run, dev) / units)
    ratios = [o / n for o, n in zip(per_unit[other], per_unit[native])]
    out = {f"{dev}_s": statistics.median(per_unit[dev]) for dev in devices}
    out.update(ratio=statistics.median(ratios), repeats=repeats)
    return out
