"""python -m tools.dev.host_profile [--native cuda|cpu] [--seconds S] [--md PATH] [--case TEXT] [--flaggems]

Where the host time of one operator call goes, function by function, on the
native device and on flagos (tools/dev/prof_sample: a timer samples this thread's
native stack). Per case: a loop of calls on each device, then a markdown
table of the functions whose self time grew most on flagos and of those only
flagos reaches. Explains the per-op overhead rows of tools.bench.gpu (a, d);
the sampler costs both sides alike.

The sampler walks the stack with glibc backtrace() from a SIGPROF handler,
which can crash the process (SIGSEGV) in sampled loops of cuBLAS calls (the
addmm and bf16 mm cases on an H200): --case runs the others alone, and
tools.bench.perf_profile samples from outside the process instead.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from pathlib import Path

import torch

import torch_fl  # noqa: F401  (the flagos device)
from tools.dev.prof_sample.sample import Sampler, compare

ROOT = Path(__file__).resolve().parents[2]


def _cases():
    """name -> make(device): the case's tensors on `device`, and a function making one call."""
    def add(device):
        a, b = torch.ones(1, device=device), torch.ones(1, device=device)
        return lambda: torch.add(a, b)

    def addmm(device):  # GPT-2's attention projection at 32 tokens
        bias, x, w = (torch.randn(s, device=device) for s in ((2304,), (32, 768), (768, 2304)))
        return lambda: torch.addmm(bias, x, w)

    def layer_norm(device):
        x, w, b = (torch.randn(s, device=device) for s in ((32, 768), (768,), (768,)))
        return lambda: torch.nn.functional.layer_norm(x, (768,), w, b)

    def mm_bf16(device):  # a training step's backward matmul, with the transposed weight
        g, w = (torch.randn(s, device=device, dtype=torch.bfloat16) for s in ((32, 2304), (768, 2304)))
        return lambda: torch.mm(g, w.t())

    def foreach_addcdiv(device):  # AdamW's update over GPT-2's 148 parameters (small ones)
        p, a, b = ([torch.rand(768, device=device) + 1 for _ in range(148)] for _ in range(3))
        steps = [1e-6] * 148
        return lambda: torch._foreach_addcdiv_(p, a, b, steps)

    return {"torch.add(a, b), 1 element": add, "torch.addmm(bias, x, w), 32x768 @ 768x2304": addmm,
            "F.layer_norm(x), 32x768": layer_norm, "torch.mm(g, w.t()), bfloat16 32x2304 @ 2304x768": mm_bf16,
            "torch._foreach_addcdiv_(p, a, b, steps), 148 tensors of 768": foreach_addcdiv}


def _flaggems_cases(native: str):
    """The flaggems route against FlagGems called directly: tools.bench.gpu's
    (e) cases for mul and layer_norm at 8x128 (on `native` the function
    FlagGems registered for the op, on flagos the torch call reaching it)."""
    from tools.bench.gpu import FLAGGEMS_OPS, _flaggems_inputs
    from torch_fl import _routing

    impls = _routing._python_impls
    ops = ("mul.Tensor", "native_layer_norm")
    missing = [op for op in ops if op not in impls or torch_fl.routes(op)[0]["route"] != "flaggems"]
    if missing:
        sys.exit(f"[flagos] --flaggems: {', '.join(missing)} not routed to flaggems; run with "
                 "FLAGOS_BACKEND_CONFIG=<installed confs>/cuda_flaggems.toml")

    def case(op):
        _, count, via_torch, direct = FLAGGEMS_OPS[op]

        def make(device):
            args = _flaggems_inputs(count, (8, 128), device)
            return (lambda: direct(impls[op], *args)) if device == native else (lambda: via_torch(*args))
        return make

    return {f"flaggems {op}, 8x128 (direct on native)": case(op) for op in ops}


def _sampler_lib() -> str:
    found = sorted(glob.glob(str(ROOT / "build" / "*" / "out" / "lib" / "libprof_sample.so")), key=os.path.getmtime)
    if not found:
        sys.exit("[flagos] libprof_sample.so not found under build/*/out/lib: build the project first")
    return found[-1]


def profile(make, device: str, seconds: float, lib: str, interval_us: int):
    """One loop of about `seconds` on `device`, sampled."""
    sync = torch.get_device_module(device).synchronize if device != "cpu" else (lambda: None)
    call = make(device)
    for _ in range(20):  # warm-up: a first call may compile (Triton) for seconds
        call()
    sync()
    timed, start = 0, time.perf_counter()  # then the rate, to size the sampled loop
    while timed < 20 or time.perf_counter() - start < 0.2:
        call()
        timed += 1
    sync()
    calls = max(20, int(seconds * timed / (time.perf_counter() - start)))
    with Sampler(lib, interval_us=interval_us) as s:
        for _ in range(calls):
            call()
        sync()
    return s.profile(calls)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--native", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seconds", type=float, default=1.0, help="length of each sampled loop")
    p.add_argument("--interval-us", type=int, default=50)
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--md", help="also write the report here")
    p.add_argument("--case", action="append", default=[],
                   help="profile only the cases whose name contains this (repeatable)")
    p.add_argument("--flaggems", action="store_true",
                   help="profile the flaggems route against FlagGems called directly instead")
    args = p.parse_args(argv)
    lib = _sampler_lib()
    with torch.no_grad():
        parts = [f"Host time per call by function, loops of about {args.seconds} s, sampled every "
                 f"{args.interval_us} µs; torch {torch.__version__}, plugin {torch_fl.plugin_info()['name']}."]
        cases = _flaggems_cases(args.native) if args.flaggems else _cases()
        if args.case:
            cases = {name: make for name, make in cases.items() if any(c in name for c in args.case)}
        for name, make in cases.items():
            native = profile(make, args.native, args.seconds, lib, args.interval_us)
            flagos = profile(make, "flagos", args.seconds, lib, args.interval_us)
            parts += ["", f"### {name}", "", compare(native, flagos, args.native, "flagos", top=args.top)]
            print(f"  {name}: {args.native} {native.ns_per_call:.0f} ns, flagos {flagos.ns_per_call:.0f} ns",
                  file=sys.stderr, flush=True)
    report = "\n".join(parts) + "\n"
    if args.md:
        Path(args.md).write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
