"""python -m tools.bench.import_cost [--runs N]

What torch's backend autoload adds to ``import torch`` (docs/compat.md): the
time ``import torch`` takes in a fresh interpreter with
TORCH_DEVICE_BACKEND_AUTOLOAD=1 (torch_fl imported through its entry point)
and =0, N runs alternating, medians and their difference. Timed inside the
child around the import: interpreter start-up and exit, which scatter by
tens of milliseconds, are not part of it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys


CHILD = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"


def _once(autoload: str) -> float:
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD=autoload)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    _once("1")  # warm the file cache
    times: dict[str, list[float]] = {"0": [], "1": []}
    for i in range(args.runs):
        for autoload in (("0", "1") if i % 2 == 0 else ("1", "0")):
            times[autoload].append(_once(autoload))
    off, on = statistics.median(times["0"]), statistics.median(times["1"])
    print(f"import torch, autoload off: {off * 1e3:.0f} ms; on (torch_fl imported): {on * 1e3:.0f} ms; "
          f"added: {(on - off) * 1e3:+.0f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
