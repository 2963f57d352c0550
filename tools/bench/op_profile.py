"""Where a workload's time goes on two devices, from one call of each side's
`run` under torch.profiler: host time per ATen operator (self CPU time; the
profiler's own cost is in both columns), and device time per CUDA kernel.
Beside a GPT-2 row they say whether a flagos gap is host overhead (operators)
or different work on the GPU (kernels)."""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile


def self_cpu_by_op(run) -> dict[str, tuple[int, float]]:
    """ATen operator -> (calls, self CPU µs) for one call of `run` (after a
    warm-up call). Compiled code's own ranges count too: their self time is
    the generated wrapper's (buffer allocation, kernel launches)."""
    run()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    out: dict[str, tuple[int, float]] = {}
    for e in prof.key_averages():
        if e.key.startswith("aten::") or "Compiled" in e.key:
            # "## Call CompiledFxGraph <hash> ##": the hash differs per device; one row for all graphs
            key = "CompiledFxGraph calls" if "CompiledFxGraph" in e.key else e.key
            calls, us = out.get(key, (0, 0.0))
            out[key] = (calls + e.count, us + e.self_cpu_time_total)
    return out


def device_time_by_kernel(run) -> dict[str, tuple[int, float]]:
    """CUDA kernel (or memcpy/memset) name -> (launches, device µs) for one
    call of `run` (after a warm-up call). Kernels launched through flagos's
    boxing are the CUDA kernels themselves, so the names compare directly."""
    if not torch.backends.cuda.is_built():  # the profiler would warn at every event, with a backtrace
        raise RuntimeError("this torch build has no CUDA")
    run()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
    # Once a PrivateUse1 backend is named, Kineto labels CUDA kernels
    # PrivateUse1 (profiler_kineto.cpp): any device event counts. GPU user
    # annotations (Optimizer.step ranges) are not kernels.
    return {e.key: (e.count, e.self_device_time_total) for e in prof.key_averages()
            if e.device_type != torch.autograd.DeviceType.CPU and not e.is_user_annotation
            and e.self_device_time_total > 0}


def kernel_note(by_dev: dict[str, dict[str, tuple[int, float]]], native: str, top: int = 6) -> str:
    """One line: each side's kernel launches and device time, the kernels
    only one side ran, and the `top` kernels with the most extra device time
    on flagos."""
    sides = "; ".join(f"{dev} {sum(c for c, _ in k.values())} launches, {sum(t for _, t in k.values()):.0f} µs"
                      for dev, k in by_dev.items())
    other = {native: "flagos", "flagos": native}
    only = {dev: sorted(set(by_dev[dev]) - set(by_dev[other[dev]]), key=lambda n, d=dev: -by_dev[d][n][1])
            for dev in (native, "flagos")}
    extra = sorted(((by_dev["flagos"].get(n, (0, 0.0))[1] - by_dev[native].get(n, (0, 0.0))[1], n)
                    for n in set(by_dev[native]) & set(by_dev["flagos"])), reverse=True)
    parts = [f"device time by CUDA kernel (torch.profiler, one call): {sides}"]
    for dev, names in only.items():
        if names:
            parts.append(f"only on {dev}: " + ", ".join(f"{n[:60]} ×{by_dev[dev][n][0]} {by_dev[dev][n][1]:.0f} µs"
                                                        for n in names[:top]))
    parts.append("most extra on flagos: " + ", ".join(f"{n[:60]} {d:+.0f} µs" for d, n in extra[:top]))
    return "; ".join(parts)


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
