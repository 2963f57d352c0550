"""The model zoo's training steps (tools/model_zoo.py, "bench" size) on flagos
against the native device, one row per architecture: fp32 forward, backward
and AdamW step, timed as in timing.py (both sides in this process,
interleaved repeats). Context rows, not targets: the issue's training target
is GPT-2's (tools/bench/gpu.py, section train)."""

from __future__ import annotations

import copy

import torch

from tools import model_zoo
from tools.bench import gpt2, op_profile, timing

STEPS = 3


def workload(name: str, size: str):
    base, inputs = model_zoo.build(name, size)

    def make(device: str):
        model = copy.deepcopy(base).to(device)
        if hasattr(model, "tie_weights"):
            model.tie_weights()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        batch = {k: v.to(device) for k, v in inputs.items()}

        def run():
            for _ in range(STEPS):
                model(**batch).loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
        return run, STEPS
    return make


def section(native: str, dry: bool, repeats: int, row) -> tuple[list, list]:
    """`row(case, unit, scale, result, native, target=False)` makes a table row (gpu.py's _timed)."""
    size = "test" if dry else "bench"
    dims = model_zoo.SIZES[size]
    rows, notes = [], [f"model_zoo '{size}' size: hidden {dims['hidden']}, {dims['layers']} layers, "
                       f"{dims['batch']} x {dims['seq']} tokens or {dims['images']} images of {dims['image']}²"]
    for name in sorted(f.__name__ for f in model_zoo.TIMED):
        make = workload(name, size)
        r = timing.compare(make, max(3, repeats // 2), devices=(native, "flagos"))
        rows.append(row(f"{name}, training step (fp32, AdamW)", "ms/step", 1e3, r, native, target=False))
        # Where a gap comes from: what left the device, and the operators
        # with the most extra host time on flagos.
        notes.append(f"{name}: {gpt2.census_note(gpt2.route_census(make('flagos')[0]))}")
        notes.append(f"{name}: {op_profile.compare_note(make, native, top=5)}")
    return rows, notes
