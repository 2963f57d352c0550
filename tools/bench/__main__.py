"""python -m tools.bench [--repeats N] [--json PATH] [--no-strict]
python -m tools.bench --distributed [--repeats N] [--json PATH] [--tiers T ...]  (tools/bench/distributed.py)

Times each case on native CPU and on flagos in the same process (interleaved,
see timing.py) and prints a markdown table: per-op overhead of a tiny op in
µs/op, small training steps in ms/step, the flagos/native ratio and the
absolute difference. Unless --no-strict, the same cases run again in a child
process with FLAGOS_PLUGIN_OPTIONS=strict=1 (host plugin only), whose ratios
come from that child's own native measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch_fl

from tools.bench import machine, timing, tiny_op, train_step

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = [("tiny op", "µs/op", 1e6, tiny_op.CASES),
            ("training step", "ms/step", 1e3, train_step.CASES)]


def measure(repeats: int) -> list[dict]:
    rows = []
    for section, unit, scale, cases in SECTIONS:
        for name, workload in cases:
            r = timing.compare(workload, repeats)
            rows.append({"section": section, "case": name, "unit": unit,
                         "cpu": r["cpu_s"] * scale, "flagos": r["flagos_s"] * scale,
                         "ratio": r["ratio"], "repeats": r["repeats"]})
            print(f"  {name}: {rows[-1]['ratio']:.2f}x", file=sys.stderr, flush=True)
    return rows


def measure_strict(repeats: int) -> list[dict] | None:
    env = dict(os.environ, FLAGOS_PLUGIN_OPTIONS="strict=1")
    child = subprocess.run([sys.executable, "-m", "tools.bench", "--child", "--repeats", str(repeats)],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    if child.returncode != 0:
        print(f"[flagos] strict-mode run failed (exit {child.returncode}):\n{child.stderr}",
              file=sys.stderr)
        return None
    return json.loads(child.stdout)["rows"]


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def table(info: dict, rows: list[dict], strict: list[dict] | None) -> str:
    lines = [f"Date {info['date']}; {info['cpu']}, {info['cores']} cores, {info['os']}; "
             f"Python {info['python']}, torch {info['torch']} ({info['torch_threads']} threads), "
             f"torch_fl {info['torch_fl']} ({info['commit']}), plugin {info['plugin']}; "
             f"load average at start {info['load_average']}; median of {rows[0]['repeats']} repeats.",
             ""]
    head = "| Case | unit | native CPU | flagos | flagos / native | flagos − native |"
    rule = "|---|---|---:|---:|---:|---:|"
    if strict:
        head += " strict=1: flagos | strict=1: flagos / native |"
        rule += "---:|---:|"
    lines += [head, rule]
    for i, r in enumerate(rows):
        line = (f"| {r['section']}: {r['case']} | {r['unit']} | {_fmt(r['cpu'])} | {_fmt(r['flagos'])} "
                f"| {r['ratio']:.2f}× | +{_fmt(r['flagos'] - r['cpu'])} |")
        if strict:
            line += f" {_fmt(strict[i]['flagos'])} | {strict[i]['ratio']:.2f}× |"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--distributed" in argv:
        from tools.bench import distributed
        return distributed.main([a for a in argv if a != "--distributed"])
    parser = argparse.ArgumentParser(prog="python -m tools.bench")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--no-strict", action="store_true", help="skip the strict-mode child run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    info = machine.describe()
    rows = measure(args.repeats)
    if args.child:
        print(json.dumps({"machine": info, "rows": rows}))
        return 0
    strict = None
    if not args.no_strict and torch_fl.plugin_info()["name"] == "host":
        print("  strict=1 child run ...", file=sys.stderr, flush=True)
        strict = measure_strict(args.repeats)
    print(table(info, rows, strict))
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "rows": rows, "strict_rows": strict},
                                        indent=2) + "\n")
    return 0 if args.no_strict or strict is not None or torch_fl.plugin_info()["name"] != "host" else 1


if __name__ == "__main__":
    sys.exit(main())
