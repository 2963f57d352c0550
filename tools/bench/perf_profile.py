"""python -m tools.bench.perf_profile [--native cuda|cpu] [--seconds S] [--case TEXT] [--top N] [--md PATH]

Where the host time of flagos goes, by library and function, against the
native device: Linux `perf` samples a loop on each device in turn, from
outside the process (no signal handler in the process: the in-process
sampler of tools/dev/prof_sample can crash inside cuBLAS). A case is
"train" (the GPT-2 training step of tools.bench.gpu (c), tools/bench/
train_loop.py) or one of tools/bench/op_cost.py's operators (its --loop).

Samples are turned into CPU µs per call (per step, for "train"): samples /
frequency / calls, over every thread of the process, so the two devices'
rows compare directly. Without frame pointers in torch's libraries the
samples carry no call chains: this is self time per function.

It takes the machine's `perf`, else .device/perf/perf (a perf copied there
with its libraries, for a machine with neither perf nor network). Without
either, or where the kernel refuses it (perf_event_paranoid), it says so in
one line and exits 0.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import torch

from tools.bench import report

ROOT = Path(__file__).resolve().parents[2]
HZ = 2999
DEFAULT_CASES = ["train", "add(a, b)", "native_layer_norm fp32", "_foreach_mul_"]
Rows = dict[tuple[str, str], float]  # (library, function) -> µs per call


def _workload(device: str, case: str, seconds: float, dry: bool, fifos: str) -> list[str]:
    """The loop's command line, its perf control fifos "CTL,ACK" given."""
    if case == "train":
        return [sys.executable, "-m", "tools.bench.train_loop", device, "--seconds", str(seconds),
                "--perf-control", fifos] + (["--dry-run"] if dry else [])
    return [sys.executable, "-m", "tools.bench.op_cost", "--loop", device, "--seconds", str(seconds),
            "--case", case, "--perf-control", fifos]


def _record(perf: str, workload: Callable[[str], list[str]], seconds: float, out: Path) -> tuple[int, str]:
    """Samples `workload(fifos)` into `out` (sampling starts disabled; the loop
    turns it on after its imports and warm-up): (calls the loop made, error text)."""
    ctl, ack = out.with_suffix(".ctl"), out.with_suffix(".ack")
    for fifo in (ctl, ack):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
    fifos = f"{ctl},{ack}"
    cmd = [perf, "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-g", "-D", "-1", "--control", f"fifo:{fifos}",
           "-o", str(out), "--"] + workload(fifos)
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=seconds * 4 + 240)
    calls = re.findall(r": (\d+) calls on ", proc.stderr)
    if proc.returncode != 0 or not out.exists() or not calls:
        return 0, f"perf record failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}"
    return int(calls[-1]), ""


def _samples(perf: str, data: Path, sort: str) -> dict[tuple[str, ...], int]:
    """Sample counts by `sort` keys ("dso" or "dso,symbol") from `perf report`."""
    proc = subprocess.run([perf, "report", "-i", str(data), "--no-children", "--sort", sort, "-n", "--stdio",
                           "-g", "none", "--percent-limit", "0.05"], capture_output=True, text=True, timeout=300)
    rows: dict[tuple[str, ...], int] = {}
    for line in proc.stdout.splitlines():
        parts = line.split(None, 4 if sort != "dso" else 2)
        if len(parts) < 3 or not parts[0].endswith("%") or not parts[1].isdigit():
            continue
        if sort == "dso":
            rows[(parts[2].strip(),)] = int(parts[1])
        elif len(parts) == 5 and parts[3] in ("[.]", "[k]"):
            function = re.split(r"\s{2,}", parts[4].strip())[0]  # perf pads the column
            rows[(parts[2], function[:110])] = int(parts[1])
    return rows


def _callers(perf: str, data: Path, symbols: list[str], lines: int) -> list[str]:
    """The call chains into each of `symbols` ("dso:NAME": any function of
    that library), as perf prints them, at most `lines` lines per symbol."""
    out = []
    for symbol in symbols:
        which = ["--dsos", symbol[4:]] if symbol.startswith("dso:") else ["--symbols", symbol]
        proc = subprocess.run([perf, "report", "-i", str(data), "--no-children", *which, "--stdio",
                               "-g", "caller,0.5,callee,function,percent", "--percent-limit", "0.01"],
                              capture_output=True, text=True, timeout=300)
        text = [line.rstrip() for line in proc.stdout.splitlines() if line.strip() and not line.startswith("#")]
        out += [f"#### callers of `{symbol}` (flagos)", "", "```"] + text[:lines] + ["```", ""]
    return out


def _per_call(samples: dict, calls: int) -> dict:
    return {key: n / HZ * 1e6 / calls for key, n in samples.items()}


def _table(title: str, native: str, rows: dict[str, dict], calls: dict[str, int], top: int, unit: str,
           columns: list[str]) -> list[str]:
    """The `top` keys whose time per call grew most on flagos, and the total."""
    n, f = rows[native], rows["flagos"]
    keys = sorted(set(n) | set(f), key=lambda k: -(f.get(k, 0.0) - n.get(k, 0.0)))
    lines = [f"### {title}", "", f"| {native} µs/{unit} | flagos µs/{unit} | flagos − {native} | "
             + " | ".join(columns) + " |", "|---:|---:|---:|" + "---|" * len(columns)]
    for key in keys[:top]:
        lines.append(f"| {n.get(key, 0.0):.2f} | {f.get(key, 0.0):.2f} | {f.get(key, 0.0) - n.get(key, 0.0):+.2f} | "
                     + " | ".join(f"`{k}`" if i else k for i, k in enumerate(key)) + " |")
    total_n, total_f = sum(n.values()), sum(f.values())
    lines += [f"| {total_n:.2f} | {total_f:.2f} | {total_f - total_n:+.2f} | all sampled" + " |" * len(columns),
              "", f"({calls[native]} {unit}s on {native}, {calls['flagos']} on flagos; CPU time of every thread, "
              f"so it can exceed the wall time)", ""]
    return lines


def _find_perf() -> str | None:
    bundled = ROOT / ".device" / "perf" / "perf"
    return shutil.which("perf") or (str(bundled) if bundled.exists() else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--case", action="append", help=f"'train' or op_cost cases (default {DEFAULT_CASES})")
    parser.add_argument("--dry-run", action="store_true", help="'train' on a 2-layer GPT-2 of width 64")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--callers", action="append", default=[], metavar="SYMBOL",
                        help="also print the call chains into SYMBOL (or any function of library NAME, "
                        "for dso:NAME) on flagos (repeatable)")
    parser.add_argument("--caller-lines", type=int, default=60)
    parser.add_argument("--md", type=Path)
    args = parser.parse_args(argv)
    perf = _find_perf()
    if perf is None:
        print("[flagos] perf is not installed on this machine (nor at .device/perf/perf): no profile")
        return 0
    lines = [f"CPU time per call by library and function (Linux perf, cpu-clock at {HZ} Hz, self time, "
             f"{args.seconds:.0f} s per case and device), {args.native} and flagos.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.case or DEFAULT_CASES:
            by_dso, by_fn, calls = {}, {}, {}
            for device in (args.native, "flagos"):
                data = Path(tmp) / "perf.data"
                def workload(fifos, device=device, case=case):
                    return _workload(device, case, args.seconds, args.dry_run, fifos)
                calls[device], error = _record(perf, workload, args.seconds, data)
                if error:
                    print(f"[flagos] {case} on {device}: {error}")
                    return 0
                by_dso[device] = _per_call(_samples(perf, data, "dso"), calls[device])
                by_fn[device] = _per_call(_samples(perf, data, "dso,symbol"), calls[device])
                if device == "flagos" and args.callers:
                    callers = _callers(perf, data, args.callers, args.caller_lines)
            unit = "step" if case == "train" else "call"
            lines += _table(f"{case}: by library", args.native, by_dso, calls, 12, unit, ["library"])
            lines += _table(f"{case}: by function", args.native, by_fn, calls, args.top, unit, ["library", "function"])
            if args.callers:
                lines += callers
            print(f"{case}: profiled", file=sys.stderr, flush=True)
    report.emit("\n".join(lines), args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
