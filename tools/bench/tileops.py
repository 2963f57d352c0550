"""The `tileops` route per operator against the `cuda` route, on flagos
tensors, and native CUDA as the reference (docs/routing.md, "TileOps").

    python -m tools.bench.tileops [--md FILE] [--json FILE] [--repeats N]

Two processes of this module, one per route (FLAGOS_FORCE_BACKEND=tileops
or not: the route is fixed at import), each timing every operator of
torch_fl/tileops/table.py on flagos and on native CUDA with CUDA events;
the table gives the per-op device time per call on each route and the
ratio tileops / cuda. The operands (`operands`) are shared with
test/gpu/test_tileops_cuda.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

import torch

# Operands with a narrower domain than randn.
POSITIVE = {"log", "sqrt", "rsqrt", "log1p", "reciprocal"}
# Two sizes per op, TileOps' manifest workloads for its elementwise ops: at
# 16M elements a call's host cost can show, at 256M the kernels' speed does.
SIZES = {"16M": ((4096, 4096), ((16, 1024, 1024), (16, 1024, 1024))),
         "256M": ((16384, 16384), ((64, 2048, 2048), (64, 2048, 2048)))}


def operands(op: str, shape: tuple, dtype: torch.dtype, seed: int = 0) -> list[torch.Tensor]:
    """CPU operands for aten `op` (torch_fl.tileops.table): its tensors of
    `shape` (bmm: `shape` is the two operand shapes), in its domain."""
    g = torch.Generator().manual_seed(seed)
    if op == "bmm":
        return [torch.randn(*s, generator=g).div(s[-1] ** 0.5).to(dtype) for s in shape]
    from torch_fl.tileops import table

    xs = [torch.randn(*shape, generator=g) for _ in range(table.OPS[op].tensors)]
    if op in POSITIVE:
        xs = [x.abs() + 0.1 for x in xs]
    if op == "div.Tensor":
        xs[1] = xs[1].sign() * (xs[1].abs() + 0.5)
    return [x.to(dtype) for x in xs]


def call(op: str, xs: list[torch.Tensor]) -> torch.Tensor:
    base, _, overload = op.partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")(*xs)


def _time(fn, repeats: int, calls: int = 20) -> float:
    """Median device microseconds per call over `repeats` blocks of `calls`."""
    fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        per_call.append(start.elapsed_time(end) * 1000 / calls)
    return statistics.median(per_call)


def side(repeats: int) -> dict:
    """This process's route: per op, device µs per call on flagos and natively."""
    import torch_fl
    from torch_fl.tileops import table

    out = {"route": {}, "flagos": {}, "native": {}, "status": torch_fl.tileops.status()}
    for size, (shape, bmm_shape) in SIZES.items():
        for op in table.OPS:
            xs = operands(op, bmm_shape if op == "bmm" else shape, torch.float16)
            flagos = [x.to("flagos") for x in xs]
            native = [x.to("cuda") for x in xs]
            key = f"{op} {size}"
            out["route"][key] = torch_fl.routes(op)[0]["route"]
            # flagos and native CUDA share the device and the stream's queue:
            # their timings are taken in turn, never overlapping.
            out["flagos"][key] = _time(lambda: call(op, flagos), repeats)
            torch.flagos.synchronize()
            out["native"][key] = _time(lambda: call(op, native), repeats)
            del xs, flagos, native
    out["stats"] = torch_fl.tileops.stats()
    return out


def run_side(force_tileops: bool, repeats: int) -> dict:
    env = dict(os.environ, FLAGOS_ALIAS_CUDA="0")
    env.pop("FLAGOS_FORCE_BACKEND", None)
    if force_tileops:
        env["FLAGOS_FORCE_BACKEND"] = "tileops"
    proc = subprocess.run([sys.executable, "-m", "tools.bench.tileops", "--side", "--repeats", str(repeats)],
                          env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"[flagos] tileops bench side failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(tileops: dict, cuda: dict) -> str:
    lines = [f"tileops: {tileops['status']}; float16; device µs per call (CUDA events, median of blocks)"]
    for size in SIZES:
        lines += ["", f"{size} elements per operand (bmm: {' x '.join(map(str, SIZES[size][1][0]))} per operand)", "",
                  "| op | tileops route | cuda route | tileops / cuda | native (tileops run) |", "|---|---|---|---|---|"]
        ratios = []
        for key, t in tileops["flagos"].items():
            op, _, at = key.partition(" ")
            if at != size:
                continue
            c = cuda["flagos"][key]
            ratios.append(t / c)
            ran = "" if tileops["route"][key] == "tileops" else f" (ran {tileops['route'][key]})"
            lines.append(f"| {op}{ran} | {t:.1f} | {c:.1f} | {t / c:.2f}x | {tileops['native'][key]:.1f} |")
        lines += ["", f"{size}: geometric mean tileops / cuda {statistics.geometric_mean(ratios):.2f}x over "
                  f"{len(ratios)} ops"]
    lines += ["", f"declined: {tileops['stats'].get('declined', {})}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.side:
        print(json.dumps(side(args.repeats)))
        return 0
    tileops, cuda = run_side(True, args.repeats), run_side(False, args.repeats)
    text = report(tileops, cuda)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tileops": tileops, "cuda": cuda}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
