"""python -m tools.bench.flaggems_cpp [--calls N] [--repeats R] [--md PATH] [--json PATH]

The flaggems_cpp route against the flaggems route, same operators, same run:
each operator FlagGems' C++ runtime registers, on small operands (the
kernel's time is far below the host's), timed through each route and through
the cuda route (torch's own CUDA kernel, for scale): µs per call until the
calls return, the best of R repeats of N calls. A route is per process, so
each runs in a child with FLAGOS_OP_<op>=<route> for every operator; the
child checks each result against the CPU first. Each FlagGems route's
child also times the same FlagGems function called natively on CUDA
tensors (the C++ operator through torch.ops.flag_gems, the Python one under
flag_gems.use_gems()), so that what the route itself adds per call (route
minus native) stands apart from what FlagGems' function costs. Needs
FLAGGEMS_DIR and FLAGGEMS_SOURCE_DIR (test/gpu/flaggems_cpp.sh) and a
flaggems_cpp build.
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
# The C++ operators called natively: flag_gems::<op> with aten's arguments.
NATIVE_CPP = {
    "mm": "F.mm(a, b)",
    "addmm": "F.addmm(c, a, b)",
    "bmm": "F.bmm(a, b)",
    "sum.dim_IntList": "F.sum.dim_IntList(a, [1])",
    "max.dim": "F.max.dim(a, 1)",
    "argmax": "F.argmax(a, 1)",
    "sort": "F.sort(a, -1)",
    "topk": "F.topk(a, 8, -1, True, True)",
    "cat": "F.cat([a, b], 0)",
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
        out[op] = {"route": routes.get(op, "?"), "us": per_call(lambda: f(**dev), calls, repeats), "ok": ok}
        if route != "cuda":
            out[op]["native_us"] = native(route, op, {k: v.to("cuda") for k, v in host.items()}, calls, repeats)
    return out


def per_call(call, calls: int, repeats: int) -> float:
    """Best of `repeats` runs of `calls` calls, µs per call until they return."""
    import torch

    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        torch.flagos.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
        torch.flagos.synchronize()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def native(route: str, op: str, cuda: dict, calls: int, repeats: int) -> float:
    """The FlagGems function the route calls, called natively on CUDA tensors."""
    import torch

    if route == "flaggems_cpp":
        f = eval(f"lambda a=None, b=None, c=None: {NATIVE_CPP[op]}", {"F": torch.ops.flag_gems})
        f(**cuda)
        return per_call(lambda: f(**cuda), calls, repeats)
    import flag_gems

    f = eval(f"lambda a=None, b=None, c=None: {OPS[op][0]}", {"torch": torch})
    with flag_gems.use_gems():
        f(**cuda)
        return per_call(lambda: f(**cuda), calls, repeats)


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
    text = report(results)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def report(results: dict) -> str:
    """Markdown: per operator each route's µs per call, FlagGems' function
    called natively (C++ and Python), the totals' ratio, and what each route
    adds to its function (route minus native: within the noise, it can come
    out below zero)."""
    rows = ["| operator | cuda µs | flaggems µs | Python FlagGems natively µs | flaggems_cpp µs "
            "| C++ FlagGems natively µs | flaggems_cpp / flaggems | flaggems_cpp adds µs | flaggems adds µs "
            "| right |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    worst, adds = 0.0, []
    for op in OPS:
        r = {route: results[route][op] for route in ROUTES}
        taken = all(r[route]["route"] == route for route in ROUTES)
        py, cpp = r["flaggems"], r["flaggems_cpp"]
        ratio = cpp["us"] / py["us"]
        worst = max(worst, ratio)
        adds.append(cpp["us"] - cpp["native_us"])
        right = all(x["ok"] for x in r.values())
        rows.append(f"| {op} | {r['cuda']['us']:.1f} | {py['us']:.1f} | {py['native_us']:.1f} | {cpp['us']:.1f} | "
                    f"{cpp['native_us']:.1f} | {ratio:.2f}"
                    f"{'' if taken else ' (routes: ' + ', '.join(x['route'] for x in r.values()) + ')'}"
                    f" | {adds[-1]:+.1f} | {py['us'] - py['native_us']:+.1f} | {'yes' if right else 'NO'} |")
    return "\n".join(rows) + (f"\n\nworst flaggems_cpp / flaggems: {worst:.2f} (target <= 0.50); the flaggems_cpp "
                              f"route adds {min(adds):+.1f} to {max(adds):+.1f} µs to FlagGems' C++ operator\n")


if __name__ == "__main__":
    sys.exit(main())
