"""GPT-2-small training step (batch 8, seq 512, bf16 autocast, AdamW), native
cuda and flagos in two processes of one run that take turns: section (c) of
tools.bench.gpu, also runnable alone.

Why two processes: the native side runs where torch_fl was never imported,
so nothing torch_fl installs (its backward window, torch_fl._autograd, or
its allocator) is part of the reference's time.

How they take turns: both processes build the model and warm up, then wait;
the parent has them time one block of STEPS steps at a time, alternating
ABBA (native, flagos, flagos, native, ...). Each block's ratio pairs two
blocks timed seconds apart, so drift over the run hits both sides alike; the
ratio is the median of those, as in timing.compare. PAIRS fresh process
pairs run one after another, because whole processes of the same code have
been seen running 34 to 47 ms/step on the same H200 host (docs/performance.md),
and a whole-process effect only averages out over processes; tools.bench.gpu
also runs both children on the same CPUs (tools/bench/cpus.py). The census
note names any operator that left the device (cpu_fallback).

    python3 -m tools.bench.gpu_train_split [PAIRS [BLOCKS]]      (on a CUDA GPU)
    python3 -m tools.bench.gpu_train_split --native cpu --dry-run  (try it on the host)
    python3 -m tools.bench.gpu_train_split 6 4 --other cuda#2      (A/A: the method's own scatter)
    python3 -m tools.bench.gpu_train_split --compiled                (both sides torch.compile'd)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from tools.bench import op_profile

BATCH, SEQ, STEPS = 8, 512, 3
DRY = (2, 32, 5)  # batch, seq, steps of --dry-run (a 2-layer GPT-2 from gpt2.config(True))


def serve(device: str, dry: bool, compiled: bool = False) -> None:
    """The child: answers one JSON line per command read from stdin
    ("time", "profile", "census"), after a first {"ready": ...} line."""
    device = device.split("#")[0]  # "cuda#2": the second native process of an A/A run
    if device == "flagos":
        import torch_fl  # noqa: F401
    from tools.bench import gpt2, timing

    batch, seq, steps = DRY if dry else (BATCH, SEQ, STEPS)
    run, n = gpt2.train_step(gpt2.build(gpt2.config(dry)), batch, seq, steps, compiled)(device)
    timing.wall_clock(run, device)  # warm-up: allocator, kernels, optimizer state
    print(json.dumps({"ready": device}), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command in ("time", "time nogc"):
            # Also the host's share: the time until run() returns, before the
            # final synchronisation. Near the whole block, the step is bound
            # by the host (or by a synchronisation inside it). "nogc" times
            # with Python's collector off, as timeit does; the count of full
            # collections says what the collector cost the other blocks.
            if command == "time nogc":
                gc.disable()
            timing.sync(device)
            start = time.perf_counter()
            run()
            queued = time.perf_counter()
            timing.sync(device)
            end = time.perf_counter()
            gc.enable()
            answer = {"s_per_step": (end - start) / n, "host_s_per_step": (queued - start) / n,
                      "full_collections": gc.get_stats()[2]["collections"]}
        elif command == "profile":  # the profiler slows the step: never during a timed block
            answer = {"ops": op_profile.self_cpu_by_op(run)}
        elif command == "kernels":  # device time per CUDA kernel: the same work on the GPU?
            try:
                answer = {"kernels": op_profile.device_time_by_kernel(run)}
            except Exception as e:  # noqa: BLE001 - a host without CUDA, a profiler without CUPTI
                answer = {"kernels": {}, "error": f"{type(e).__name__}: {e}"}
        elif command == "census":
            answer = {"census": gpt2.census_note(gpt2.route_census(run))}
        else:
            return
        print(json.dumps(answer), flush=True)


class _Child:
    """One serving process; ask() sends a command and waits for its answer."""

    def __init__(self, device: str, dry: bool, timeout: float, compiled: bool = False):
        self.device, self.timeout = device, timeout
        self._stderr = tempfile.TemporaryFile(mode="w+")
        args = [sys.executable, "-m", "tools.bench.gpu_train_split", "--serve", device] + \
            (["--dry-run"] if dry else []) + (["--compiled"] if compiled else [])
        # The native side never imports torch_fl (torch's backend autoload would).
        env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0") if device != "flagos" else None
        self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                      text=True, env=env)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self._proc.stdout:
            if line.startswith("{"):
                self._lines.put(json.loads(line))
        self._lines.put(None)  # the process ended

    def ask(self, command: str | None) -> dict:
        if command:
            self._proc.stdin.write(command + "\n")
            self._proc.stdin.flush()
        try:
            answer = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            answer = None
        if answer is None:
            self.close()
            self._stderr.seek(0)
            raise RuntimeError(f"[flagos] GPT-2 training child on {self.device} gave no answer to "
                               f"{command or 'its start'} within {self.timeout:.0f} s (exit {self._proc.poll()}):\n"
                               f"{self._stderr.read()[-3000:]}")
        return answer

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write("quit\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()


def measure(pairs: int = 2, blocks: int = 8, timeout: float = 240, native: str = "cuda",
            dry: bool = False, other: str = "flagos", compiled: bool = False) -> dict:
    """Seconds per step on each side (medians of all blocks, keyed like
    timing.compare: "<native>_s", "flagos_s"), the ratio (median of the
    per-block ratios), each pair's medians ("rounds"), the routes the flagos
    side's operators took (a census note) and, from the first pair, host time
    by ATen operator and device time by CUDA kernel on each side (op_profile
    notes). Each pair also times blocks with Python's collector off, between
    the others; their ratio is reported in "rounds". `other` "cuda#2" makes
    it an A/A run: a second native process stands in for flagos, and the
    ratios show what the method itself scatters. `compiled`: both sides
    torch.compile the model (gpt2.train_step)."""
    times: dict[str, list[float]] = {native: [], other: []}
    ratios, nogc_ratios, per_pair, census, ops, kernels = [], [], [], "", {}, ""
    for p in range(pairs):
        children = {dev: _Child(dev, dry, timeout, compiled) for dev in (native, other)}  # both load at once
        try:
            for child in children.values():
                child.ask(None)  # ready
            mine: dict[str, list[float]] = {native: [], other: []}
            queued: dict[str, list[float]] = {native: [], other: []}
            nogc: dict[str, list[float]] = {native: [], other: []}
            collections: dict[str, list[int]] = {native: [], other: []}
            for b in range(blocks):
                for dev in ((native, other) if b % 2 == 0 else (other, native)):
                    answer = children[dev].ask("time")
                    mine[dev].append(answer["s_per_step"])
                    queued[dev].append(answer["host_s_per_step"])
                    collections[dev].append(answer["full_collections"])
                ratios.append(mine[other][-1] / mine[native][-1])
                for dev in ((other, native) if b % 2 == 0 else (native, other)):
                    nogc[dev].append(children[dev].ask("time nogc")["s_per_step"])
                nogc_ratios.append(nogc[other][-1] / nogc[native][-1])
            def both(per_side: dict, value) -> str:  # "native/flagos"
                return "/".join(value(per_side[dev]) for dev in (native, other))

            ms = lambda times: f"{statistics.median(times) * 1e3:.1f}"  # noqa: E731
            per_pair.append(f"{both(mine, ms)} (host {both(queued, ms)}; collector off {both(nogc, ms)}; "
                            f"full collections {both(collections, lambda c: str(c[-1] - c[0]))})")
            for dev in mine:
                times[dev] += mine[dev]
            print(f"    pair {p + 1}: {native}/{other} {per_pair[-1]} ms/step", file=sys.stderr, flush=True)
            if p == 0 and other == "flagos":
                ops = {dev: {op: tuple(v) for op, v in child.ask("profile")["ops"].items()}
                       for dev, child in children.items()}
                # Kernels before the census: the census's dispatch hooks make compiled code recompile.
                answers = {dev: child.ask("kernels") for dev, child in children.items()}
                census = children[other].ask("census")["census"]
                errors = [f"{dev}: {a['error']}" for dev, a in answers.items() if "error" in a]
                kernels = ("no device profile (" + "; ".join(errors) + ")" if errors else
                           op_profile.kernel_note({dev: {k: tuple(v) for k, v in a["kernels"].items()}
                                                   for dev, a in answers.items()}, native))
        finally:
            for child in children.values():
                child.close()
    out = {f"{dev}_s": statistics.median(t) for dev, t in times.items()}
    out.update(ratio=statistics.median(ratios), repeats=len(ratios), census=census, block_ratios=ratios,
               rounds=f"{pairs} process pairs x {blocks} blocks; each pair's median ms/step, {native}/{other} "
                      "(host: until the last call returned; collector off: blocks timed with Python's gc "
                      "disabled, between the others; full collections: during the pair's blocks): "
                      + ", ".join(per_pair) + f"; with the collector off, {other}/{native} = "
                      f"{statistics.median(nogc_ratios):.3f}",
               op_profile=op_profile.note_from(ops, native, top=10) if ops else "", kernels=kernels)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="?", type=int, default=2)
    parser.add_argument("blocks", nargs="?", type=int, default=8)
    parser.add_argument("--native", default="cuda")
    parser.add_argument("--other", default="flagos", help="the compared side; e.g. cuda#2 for an A/A run")
    parser.add_argument("--dry-run", action="store_true", help="a 2-layer GPT-2 at batch 2 x 32 tokens")
    parser.add_argument("--compiled", action="store_true", help="both sides torch.compile the model")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.dry_run, args.compiled)
        return 0
    r = measure(args.pairs, args.blocks, native=args.native, dry=args.dry_run, other=args.other,
                compiled=args.compiled)
    print(f"native {args.native} {r[f'{args.native}_s'] * 1e3:.1f} ms/step, {args.other} "
          f"{r[f'{args.other}_s'] * 1e3:.1f} ms/step: {args.other}/{args.native} = {r['ratio']:.3f} "
          f"(ratios of single blocks: {min(r['block_ratios']):.3f} to {max(r['block_ratios']):.3f})")
    for key in ("rounds", "census", "op_profile", "kernels"):
        if r[key]:
            print(r[key])
    return 0


if __name__ == "__main__":
    sys.exit(main())
