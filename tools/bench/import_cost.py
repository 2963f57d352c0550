"""python -m tools.bench.import_cost [--runs N]

What torch's backend autoload adds to ``import torch`` (docs/compat.md): the
wall time of a fresh interpreter running ``import torch`` with
TORCH_DEVICE_BACKEND_AUTOLOAD=1 (torch_fl imported through its entry point)
and =0, N runs alternating, medians and their difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def _once(autoload: str) -> float:
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD=autoload)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], env=env, check=True)
    return time.perf_counter() - start


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
