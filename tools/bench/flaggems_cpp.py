"""python -m tools.bench.flaggems_cpp [--calls N] [--repeats R] [--md PATH] [--json PATH]

The flaggems_cpp route against the flaggems route, same operators, same run:
each operator FlagGems' C++ runtime registers, on small operands (the
kernel's time is far below the host's), timed through each route and through
the cuda route (torch's own CUDA kernel, for scale): µs per call until the
calls return, the best of R repeats of N calls. A route is per process, so
each runs in a child with FLAGOS_OP_<op>=<route> for every operator; the
child checks each result against the CPU first. Needs FLAGGEMS_DIR and
FLAGGEMS_SOURCE_DIR (test/gpu/flaggems_cpp.sh) and a flaggems_cpp build.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROUTES = ("cuda", "flaggems", "flaggems_cpp")
# op -> (call on the operands, operands' shapes); ops whose aten name and
# FlagGems' C++ operator take the same arguments (core/routes/flaggems_cpp.cpp;
# _softmax is not among them: the route never takes FlagGems' softmax).
OPS = {
    "mm": ("torch.mm(a, b)", [(64, 64), (64, 64)]),
    "addmm": ("torch.addmm(c, a, b)", [(64, 64), (64, 64), (64,)]),
    "bmm": ("torch.bmm(a, b)", [(4, 32, 32), (4, 32, 32)]),
    "sum.dim_IntList": ("torch.sum(a, 1)", [(64, 256)]),
    "max.dim": ("torch.max(a, 1)", [(64, 256)]),
    "argmax": ("torch.argmax(a, 1)", [(64, 256)]),
    "sort": ("torch.sort(a, -1)", [(16, 128)]),
    "topk": ("torch.topk(a, 8, -1)", [(16, 128)]),
    "cat": ("torch.cat([a, b], 0)", [(64, 64), (64, 64)]),
}


def env_name(op: str) -> str:
    return "FLAGOS_OP_" + op.replace(".", "__")


def child(route: str, calls: int, repeats: int) -> dict:
    import torch
    import torch_fl

    routes = {r["op"]: r["route"] for r in torch_fl.routes()}
    g = torch.Generator().manual_seed(0)
    out = {}
    for op, (expr, shapes) in OPS.items():
        host = dict(zip("abc", (torch.randn(s, generator=g) for s in shapes)))
        dev = {k: v.to("flagos") for k, v in host.items()}
        f = eval(f"lambda a=None, b=None, c=None: {expr}", {"torch": torch})
        got, want = f(**dev), f(**host)
        got, want = (got, want) if isinstance(got, torch.Tensor) else (got[0], want[0])
        ok = torch.allclose(got.cpu(), want, rtol=1e-3, atol=1e-3)
        best = float("inf")
        for _ in range(repeats):
            torch.flagos.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                f(**dev)
            torch.flagos.synchronize()
            best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        out[op] = {"route": routes.get(op, "?"), "us": best, "ok": ok}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.flaggems_cpp")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--md")
    parser.add_argument("--json")
    parser.add_argument("--child", choices=ROUTES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.calls, args.repeats)))
        return 0
    results = {}
    for route in ROUTES:
        env = {**os.environ, **{env_name(op): route for op in OPS}}
        done = subprocess.run([sys.executable, "-m", "tools.bench.flaggems_cpp", "--child", route,
                               "--calls", str(args.calls), "--repeats", str(args.repeats)],
                              capture_output=True, text=True, env=env, timeout=900)
        if done.returncode:
            print(f"[flagos] the {route} side failed:\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        results[route] = json.loads(done.stdout.strip().splitlines()[-1])
    rows = ["| operator | cuda µs | flaggems µs | flaggems_cpp µs | flaggems_cpp / flaggems | right |",
            "|---|---|---|---|---|---|"]
    worst = 0.0
    for op in OPS:
        r = {route: results[route][op] for route in ROUTES}
        taken = all(r[route]["route"] == route for route in ROUTES)
        ratio = r["flaggems_cpp"]["us"] / r["flaggems"]["us"]
        worst = max(worst, ratio)
        right = all(x["ok"] for x in r.values())
        rows.append(f"| {op} | {r['cuda']['us']:.1f} | {r['flaggems']['us']:.1f} | {r['flaggems_cpp']['us']:.1f} | "
                    f"{ratio:.2f}{'' if taken else ' (routes: ' + ', '.join(x['route'] for x in r.values()) + ')'}"
                    f" | {'yes' if right else 'NO'} |")
    text = "\n".join(rows) + f"\n\nworst flaggems_cpp / flaggems: {worst:.2f} (target <= 0.50)\n"
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
