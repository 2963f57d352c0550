"""Where a workload's host time goes, per ATen operator, on two devices: one
call of each side's `run` under torch.profiler (CPU activity only), compared
by each operator's self CPU time. Beside a GPT-2 row it says which operators
carry the flagos overhead (the profiler's own cost is in both columns)."""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile


def self_cpu_by_op(run) -> dict[str, tuple[int, float]]:
    """ATen operator -> (calls, self CPU µs) for one call of `run` (after a
    warm-up call)."""
    run()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return {e.key: (e.count, e.self_cpu_time_total) for e in prof.key_averages() if e.key.startswith("aten::")}


def compare_note(make, native: str, top: int = 8) -> str:
    """One line: each side's operator calls and their self CPU time, then the
    `top` operators with the most extra time on flagos."""
    return note_from({dev: self_cpu_by_op(make(dev)[0]) for dev in (native, "flagos")}, native, top)


def note_from(by_dev: dict[str, dict[str, tuple[int, float]]], native: str, top: int = 8) -> str:
    """compare_note's line from profiles taken elsewhere (each side in its
    own process, as the training bench must)."""
    totals = {dev: (sum(c for c, _ in ops.values()), sum(t for _, t in ops.values())) for dev, ops in by_dev.items()}
    extra = []
    for op in set(by_dev[native]) | set(by_dev["flagos"]):
        n_calls, n_us = by_dev[native].get(op, (0, 0.0))
        f_calls, f_us = by_dev["flagos"].get(op, (0, 0.0))
        per = f"{n_us / n_calls:.1f}→{f_us / f_calls:.1f} µs/call" if n_calls and f_calls else "on one side only"
        extra.append((f_us - n_us, f"{op.removeprefix('aten::')} ×{f_calls} {f_us - n_us:+.0f} µs ({per})"))
    extra.sort(reverse=True)
    sides = "; ".join(f"{dev} {calls} operator calls, {us:.0f} µs" for dev, (calls, us) in totals.items())
    return (f"host time by ATen operator (torch.profiler, self CPU, one call; _local_scalar_dense and "
            f"copies to the CPU include waiting for queued device work): {sides}; most extra on flagos: "
            + ", ".join(text for _, text in extra[:top]))
