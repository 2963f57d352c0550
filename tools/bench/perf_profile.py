"""python -m tools.bench.perf_profile [--native cuda|cpu] [--seconds S] [--case TEXT] [--top N] [--md PATH]

Where the host time of an operator call goes, by library and function, on the
native device and on flagos: Linux `perf` samples a loop of one case of
tools/bench/op_cost.py (`--loop`) on each device in turn, from outside the
process (no signal handler in the process: the in-process sampler of
tools/prof_sample crashed inside cuBLAS on the H200). Without frame pointers in
torch's libraries the samples carry no call chains, so this is self time per
function; the functions only flagos reaches (libtorch_fl_core) and those that
grow are the per-operator cost of (a) and (c).

Without `perf` on the machine, or where the kernel refuses it
(perf_event_paranoid), it says so in one line and exits 0.
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

import torch

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CASES = ["add(a, b)", "mm(g, w.t())", "native_layer_norm fp32", "_foreach_mul_"]


def _record(perf: str, device: str, case: str, seconds: float, out: Path) -> str:
    """Samples the loop of `case` on `device` into `out` (sampling starts
    disabled; the loop turns it on after its imports and warm-up); an error
    text, or ""."""
    ctl, ack = out.with_suffix(".ctl"), out.with_suffix(".ack")
    for fifo in (ctl, ack):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
    cmd = [perf, "record", "-q", "-e", "cpu-clock", "-F", "2999", "-D", "-1", "--control", f"fifo:{ctl},{ack}",
           "-o", str(out), "--", sys.executable, "-m", "tools.bench.op_cost", "--loop", device,
           "--seconds", str(seconds), "--case", case, "--perf-control", f"{ctl},{ack}"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=seconds * 4 + 120)
    if proc.returncode != 0 or not out.exists():
        return f"perf record failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}"
    return ""


def _self_time(perf: str, data: Path) -> list[tuple[float, str, str]]:
    """(percent of samples, library, function) from `perf report`, largest first."""
    proc = subprocess.run([perf, "report", "-i", str(data), "--no-children", "--sort", "dso,symbol", "--stdio",
                           "-g", "none", "--percent-limit", "0.2"], capture_output=True, text=True, timeout=300)
    rows = []
    for line in proc.stdout.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[0].endswith("%") and parts[2] in ("[.]", "[k]"):
            function = re.split(r"\s{2,}", parts[3].strip())[0]  # perf pads the column
            rows.append((float(parts[0].rstrip("%")), parts[1], function[:110]))
    return rows


def _table(case: str, native: str, rows: dict[str, list[tuple[float, str, str]]], top: int) -> list[str]:
    lines = [f"### {case}", "", f"| % of {native} samples | % of flagos samples | library | function |",
             "|---:|---:|---|---|"]
    by_key = {dev: {(lib, fn): pct for pct, lib, fn in r} for dev, r in rows.items()}
    keys = sorted(set(by_key[native]) | set(by_key["flagos"]),
                  key=lambda k: -(by_key["flagos"].get(k, 0.0) - by_key[native].get(k, 0.0)))
    for key in keys[:top]:
        lines.append(f"| {by_key[native].get(key, 0.0):.1f} | {by_key['flagos'].get(key, 0.0):.1f} "
                     f"| {key[0]} | `{key[1]}` |")
    lines += ["", "(rows: the functions whose share grew most on flagos; a share, not a time: the flagos "
              "loop makes fewer calls in the same seconds)", ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--case", action="append", help=f"cases of tools.bench.op_cost (default {DEFAULT_CASES})")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--md", type=Path)
    args = parser.parse_args(argv)
    perf = shutil.which("perf")
    if perf is None:
        print("[flagos] perf is not installed on this machine: no profile")
        return 0
    lines = [f"Self time by function (Linux perf, cpu-clock at 2999 Hz, {args.seconds:.0f} s per case and "
             f"device), {args.native} and flagos.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.case or DEFAULT_CASES:
            rows = {}
            for device in (args.native, "flagos"):
                data = Path(tmp) / "perf.data"
                error = _record(perf, device, case, args.seconds, data)
                if error:
                    print(f"[flagos] {case} on {device}: {error}")
                    return 0
                rows[device] = _self_time(perf, data)
            lines += _table(case, args.native, rows, args.top)
            print(f"{case}: profiled", file=sys.stderr, flush=True)
    text = "\n".join(lines)
    print(text)
    if args.md:
        args.md.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
