"""python -m tools.bench --distributed [--repeats N] [--json PATH] [--tiers T ...]

The "flagos" backend against native gloo on CPU tensors, two ranks on this
machine, same run: all_reduce bus bandwidth from 1 KiB to 256 MiB and one
DDP training step. Each tier runs in its own pair of processes (the host
plugin as it is: its communicator; with collectives=0: gloo-zero-copy; with
strict=1 as well: gloo-staged), and each measures its own native baseline,
interleaved with it (timing.py). The zero-copy tier's processes also time
native gloo against a second native gloo group the same way: that ratio,
1.0 but for this machine's noise, is the spread any tier's ratio carries.

Bus bandwidth is NCCL's convention: bytes * 2 (n - 1) / n / seconds."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIZES = [1 << s for s in range(10, 29, 2)]  # 1 KiB .. 256 MiB
TIERS = {"communicator": {},
         "gloo-zero-copy": {"FLAGOS_PLUGIN_OPTIONS": "collectives=0"},
         "gloo-staged": {"FLAGOS_PLUGIN_OPTIONS": "strict=1,collectives=0"}}
WORLD = 2
GLOO_CONTROL_TIER = "gloo-zero-copy"  # its processes also run the native-vs-native control


def _iterations(nbytes: int) -> int:
    """all_reduces per timed block: about 64 MiB reduced, 3 to 200 calls."""
    return max(3, min(200, (64 << 20) // nbytes))


def _rank_main(repeats: int, control: bool) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    import torch_fl
    from tools.bench import machine, timing

    dist.init_process_group("flagos", timeout=timedelta(seconds=600))
    rank = dist.get_rank()
    # "cpu#2": native gloo again, in a group of its own (the control).
    groups = {"cpu": dist.new_group(backend="cpu:gloo"), "flagos": dist.group.WORLD}
    if control:
        groups["cpu#2"] = dist.new_group(backend="cpu:gloo")

    def timer(run, key: str) -> float:
        return timing.wall_clock(run, key.split("#")[0])

    def all_reduce(nbytes: int):
        def workload(key: str):
            t = torch.ones(nbytes // 4, device=key.split("#")[0])
            n = _iterations(nbytes)

            def run():
                for _ in range(n):
                    dist.all_reduce(t, group=groups[key])
            return run, n
        return workload

    def ddp_step(key: str):
        device = key.split("#")[0]
        torch.manual_seed(0)
        model = nn.Sequential(*[nn.Sequential(nn.Linear(512, 512), nn.ReLU()) for _ in range(4)]).to(device)
        ddp = nn.parallel.DistributedDataParallel(model, process_group=groups[key])
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        x = torch.randn(32, 512, device=device)

        def run():
            opt.zero_grad()
            ddp(x).sum().backward()
            opt.step()
        return run, 1

    def control_ratio(workload, warmup: int = 1) -> dict:
        if not control:
            return {}
        return {"control": timing.compare(workload, repeats, warmup, devices=("cpu", "cpu#2"), timer=timer)["ratio"]}

    # Ratios are medians of the interleaved pairs' ratios (timing.compare).
    rows = []
    for nbytes in SIZES:
        r = timing.compare(all_reduce(nbytes), repeats)
        c = control_ratio(all_reduce(nbytes))
        bus = nbytes * 2 * (WORLD - 1) / WORLD
        rows.append({"case": f"all_reduce {_size(nbytes)}", "unit": "GB/s", "bytes": nbytes,
                     "cpu": bus / r["cpu_s"] / 1e9, "flagos": bus / r["flagos_s"] / 1e9,
                     "ratio": 1 / r["ratio"], **{k: 1 / v for k, v in c.items()}})
    r = timing.compare(ddp_step, repeats, warmup=3)
    rows.append({"case": "DDP step (4x Linear 512, batch 32)", "unit": "ms", "cpu": r["cpu_s"] * 1e3,
                 "flagos": r["flagos_s"] * 1e3, "ratio": r["ratio"], **control_ratio(ddp_step, warmup=3)})
    if rank == 0:
        print(json.dumps({"machine": machine.describe(), "tier": torch_fl.distributed.tier(), "rows": rows}))
    dist.destroy_process_group()


def _size(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_tier(extra_env: dict[str, str], repeats: int, control: bool) -> dict:
    port = str(_free_port())
    procs = []
    for rank in range(WORLD):
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), **extra_env, RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, "-m", "tools.bench.distributed", "--rank",
                                       "--repeats", str(repeats), *(["--control"] if control else [])],
                                      cwd=ROOT, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate() for p in procs]
    for p, (_, err) in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError(f"[flagos] a benchmark rank failed (exit {p.returncode}):\n{err[-3000:]}")
    return json.loads(outs[0][0])


def table(results: dict[str, dict]) -> str:
    first = next(iter(results.values()))["machine"]
    lines = [f"Date {first['date']}; {first['cpu']}, {first['cores']} cores, {first['os']}; "
             f"Python {first['python']}, torch {first['torch']}, torch_fl {first['torch_fl']} "
             f"({first['commit']}), plugin {first['plugin']}; {WORLD} ranks on this machine; "
             f"median of the interleaved repeats. all_reduce: bus bandwidth, higher is better "
             f"(ratio native time / flagos time); DDP: ms per step, lower is better "
             f"(ratio flagos / native).", ""]
    tiers = list(results)
    lines.append("| Case | unit | native gloo (CPU) | " + " | ".join(
        f"{t} | {t} vs native" for t in tiers) + " |")
    lines.append("|---|---|---:|" + "---:|---:|" * len(tiers))
    rows = [r["rows"] for r in results.values()]
    # The control tier's processes time native gloo against native gloo too.
    control = results[GLOO_CONTROL_TIER]["rows"] if GLOO_CONTROL_TIER in results else None
    if control:
        lines[-2] += " native gloo vs native gloo |"
        lines[-1] += "---:|"
    for i, row in enumerate(rows[0]):
        cells = [f"{r[i]['flagos']:.3g} | {r[i]['ratio']:.2f}×" for r in rows]
        extra = f" {control[i]['control']:.2f}× |" if control else ""
        lines.append(f"| {row['case']} | {row['unit']} | {row['cpu']:.3g} | " + " | ".join(cells) + " |" + extra)
    lines.append("")
    lines.append(f"The native column is the {tiers[0]} run's own baseline; each tier's ratio is "
                 "against the baseline measured in its own processes, the median of the interleaved "
                 "pairs' ratios.")
    if control:
        lines.append("The last column times native gloo against a second native gloo group the same way "
                     f"(in the {GLOO_CONTROL_TIER} processes): its spread around 1.00× is this machine's noise.")
        big = [r["ratio"] for r in control if r.get("bytes", 0) >= 1 << 20]
        mean = math.exp(sum(map(math.log, big)) / len(big))
        lines.append(f"{GLOO_CONTROL_TIER} at >= 1 MiB, geometric mean over the sizes: {mean:.2f}×.")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m tools.bench --distributed")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--tiers", nargs="+", choices=list(TIERS), default=list(TIERS),
                        help="which tiers to run (default: all)")
    parser.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--control", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rank:
        _rank_main(args.repeats, args.control)
        return 0
    results = {}
    for tier in args.tiers:
        env = TIERS[tier]
        print(f"  {tier} ...", file=sys.stderr, flush=True)
        results[tier] = _run_tier(env, args.repeats, control=tier == GLOO_CONTROL_TIER)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
