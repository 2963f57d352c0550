"""python -m tools.bench.op_cost [--native cuda|cpu] [--calls N] [--repeats R] [--md PATH] [--case TEXT]
       python -m tools.bench.op_cost --loop DEVICE [--seconds S] [--case TEXT]

Host time per call of the operators a GPT-2-small training step spends most
of its host time in (batch 8 x 512 tokens, bf16 where autocast casts), on
the native device and on flagos: the time until a block of calls returns,
before synchronising, so kernels still running do not count. Blocks on the
two devices alternate (tools/bench/timing.py). Explains the training row of
tools.bench.gpu (c) operator by operator, without a profiler in the loop.

--loop runs the chosen cases on one device for S seconds each, synchronising
every N calls, and times nothing: the workload a profiler attached from
outside samples (tools/bench/perf_profile.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

import torch_fl  # noqa: F401  (the flagos device)
from tools.bench import report, timing
from tools.bench.perf_control import PerfControl

TOKENS, WIDTH, HEADS, SEQ = 8 * 512, 768, 12, 512


def _tensor(shape, device, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(0)
    return torch.randn(shape, generator=g).to(dtype).to(device)


def _cases():
    """name -> make(device): one call of the operator on `device`'s tensors."""
    def add(device):  # the tiny op of tools.bench.gpu (a)
        a, b = _tensor((1,), device, torch.float32), _tensor((1,), device, torch.float32)
        return lambda: torch.add(a, b)

    def mm_nt(device):  # backward: grad_in = grad_out @ W
        g, w = _tensor((TOKENS, 3072), device), _tensor((WIDTH, 3072), device)
        return lambda: torch.mm(g, w.t())

    def mm_tn(device):  # backward: grad_W = grad_out.T @ x
        g, x = _tensor((TOKENS, 3072), device), _tensor((TOKENS, WIDTH), device)
        return lambda: torch.mm(g.t(), x)

    def addmm(device):  # forward: Conv1D's projection
        b, x, w = _tensor((3072,), device), _tensor((TOKENS, WIDTH), device), _tensor((WIDTH, 3072), device)
        return lambda: torch.addmm(b, x, w)

    def to_bf16(device):  # autocast's cast of a weight
        w = _tensor((WIDTH, 3072), device, torch.float32)
        return lambda: w.to(torch.bfloat16)

    def mul(device):
        a, b = _tensor((TOKENS, 3072), device), _tensor((TOKENS, 3072), device)
        return lambda: torch.mul(a, b)

    def add_(device):  # the residual stream
        a, b = _tensor((TOKENS, WIDTH), device, torch.float32), _tensor((TOKENS, WIDTH), device, torch.float32)
        return lambda: a.add_(b)

    def sum_dim(device):  # a bias's gradient
        g = _tensor((TOKENS, 3072), device)
        return lambda: g.sum(0)

    def layer_norm(device):
        x = _tensor((8, 512, WIDTH), device, torch.float32)
        w, b = _tensor((WIDTH,), device, torch.float32), _tensor((WIDTH,), device, torch.float32)
        return lambda: torch.native_layer_norm(x, [WIDTH], w, b, 1e-5)

    def layer_norm_backward(device):
        x = _tensor((8, 512, WIDTH), device, torch.float32)
        w, b = _tensor((WIDTH,), device, torch.float32), _tensor((WIDTH,), device, torch.float32)
        _, mean, rstd = torch.native_layer_norm(x, [WIDTH], w, b, 1e-5)
        return lambda: torch.ops.aten.native_layer_norm_backward(x, x, [WIDTH], mean, rstd, w, b, [True, True, True])

    def flaggems_layer_norm(device):  # (e): on flagos, the route this process gives native_layer_norm
        x = _tensor((8, 128), device, torch.float32)
        w, b = _tensor((128,), device, torch.float32), _tensor((128,), device, torch.float32)
        if device == "flagos":
            return lambda: torch.native_layer_norm(x, [128], w, b, 1e-5)
        import flag_gems
        fn = next(item[1] for item in flag_gems._FULL_CONFIG if item[0] == "native_layer_norm")
        return lambda: fn(x, [128], w, b, 1e-5)

    def attention(device):  # what F.scaled_dot_product_attention reaches for bf16 on an H200
        q, k, v = (_tensor((8, HEADS, SEQ, 64), device) for _ in range(3))
        if not torch.cuda.is_available():  # no cuDNN: the operator F.sdpa reaches here
            return lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        op = torch.ops.aten._scaled_dot_product_cudnn_attention
        return lambda: op(q, k, v, None, True, 0.0, True)

    def foreach_mul_(device):  # AdamW over GPT-2's 148 parameters
        ps = [_tensor((WIDTH,), device, torch.float32) for _ in range(148)]
        return lambda: torch._foreach_mul_(ps, 0.999)

    return {"add(a, b) fp32 1 element": add, "mm(g, w.t()) bf16 4096x3072 @ 3072x768": mm_nt, "mm(g.t(), x) bf16 3072x4096 @ 4096x768": mm_tn,
            "addmm(b, x, w) bf16 4096x768 @ 768x3072": addmm, "w.to(bfloat16) 768x3072": to_bf16,
            "mul(a, b) bf16 4096x3072": mul, "a.add_(b) fp32 4096x768": add_, "g.sum(0) bf16 4096x3072": sum_dim,
            "native_layer_norm fp32 8x512x768": layer_norm,
            "native_layer_norm_backward fp32 8x512x768": layer_norm_backward,
            "_scaled_dot_product_cudnn_attention bf16 8x12x512x64, causal": attention,
            "_foreach_mul_(148 tensors of 768, 0.999)": foreach_mul_,
            "flaggems layer_norm fp32 8x128 (native: FlagGems called directly)": flaggems_layer_norm}


def _chosen(filters: list[str] | None) -> dict:
    """The cases whose name contains one of `filters` (all without filters)."""
    return {name: make for name, make in _cases().items() if not filters or any(f in name for f in filters)}


def host_time(run, device: str) -> float:
    """Seconds until the block's calls return; its kernels finish afterwards."""
    timing.sync(device)
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    timing.sync(device)
    return took


def loop(device: str, seconds: float, calls: int, cases: list[str] | None, perf_fifos: str | None = None) -> int:
    """Runs each chosen case on `device` for `seconds`, in blocks of `calls`,
    after a warm-up; with `perf_fifos`, perf samples the loops only."""
    perf = PerfControl(perf_fifos)
    for name, make in _chosen(cases).items():
        call = make(device)
        for _ in range(calls * 4):
            call()
        timing.sync(device)
        perf.command("enable")
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            for _ in range(calls):
                call()
            timing.sync(device)
            n += calls
        perf.command("disable")
        print(f"{name}: {n} calls on {device} in {seconds:.0f} s", file=sys.stderr, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=50, help="calls per timed block (few: the launch queue "
                                                              "must not fill)")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--case", action="append", help="only cases whose name contains this (repeatable)")
    parser.add_argument("--md", type=Path)
    parser.add_argument("--loop", metavar="DEVICE", help="run the cases on DEVICE for --seconds each, untimed")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--perf-control", metavar="CTL,ACK", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.loop:
        return loop(args.loop, args.seconds, args.calls, args.case, args.perf_control)
    lines = [f"Host µs per call until return, {args.native} and flagos, {args.calls} calls per block, "
             f"{args.repeats} blocks each (medians; ratio: median of per-block ratios).", "",
             f"| operator | {args.native} µs | flagos µs | flagos − {args.native} µs | ratio |", "|---|---:|---:|---:|---:|"]
    for name, make in _chosen(args.case).items():
        def workload(device, make=make):
            call = make(device)

            def run():
                for _ in range(args.calls):
                    call()
            return run, args.calls
        try:
            r = timing.compare(workload, args.repeats, warmup=2, devices=(args.native, "flagos"), timer=host_time)
        except Exception as exc:  # noqa: BLE001 - one case failing must not lose the others
            lines.append(f"| {name} | failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]} | | | |")
            continue
        n, f = r[f"{args.native}_s"] * 1e6, r["flagos_s"] * 1e6
        lines.append(f"| {name} | {n:.1f} | {f:.1f} | {f - n:+.1f} | {r['ratio']:.3f} |")
        print(lines[-1], file=sys.stderr, flush=True)
    report.emit("\n".join(lines), args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
