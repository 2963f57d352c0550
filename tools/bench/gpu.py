"""python -m tools.bench.gpu [--json F] [--md F] [--repeats N] [--jobs J,...] [--dry-run]

flagos (on the cuda plugin) against native CUDA on the same GPU, in the same
run, each case timed as in tools/bench/timing.py (interleaved repeats,
medians, per-repeat ratios):

  (a) tiny       host cost of a tiny op (tools/bench/tiny_op.py): 1000 calls,
                 synchronised only at the block's ends; µs/op
  (b) bandwidth  torch.add(a, b, out=c) on 2^28 float32 elements (3 x 1 GiB
                 moved per add), timed with events on the current stream; TB/s
  (c) train      GPT-2 small training step (tools/bench/gpt2.py): batch 8 x 512
                 tokens, bf16 autocast, AdamW; ms/step
  (d) infer      GPT-2 small, batch 1: a 32-token no-grad forward (the target
                 row) and greedy decoding of 32 tokens with the KV cache; ms
  (f) compile-train, compile-infer: (c) and (d)'s forward with the model
                 compiled (torch.compile, default Inductor) on both sides; not
                 in the default jobs (each side compiles first, minutes)
  (g) graph-infer  (d)'s forward captured once and replayed: torch.flagos.graph
                 against torch.cuda.graph (tools/bench/graph_replay.py), and
                 the replay against flagos eager
  (h) compile-flex  flex attention compiled (Inductor's fused template,
                 tools/bench/flex.py), forward and forward+backward, bf16;
                 not in the default jobs
  (i) zoo        one training step of each tools/model_zoo.py architecture
                 (BERT, T5, Llama, Mixtral, ViT, ResNet), fp32, AdamW; context
                 rows; not in the default jobs
  (e) flaggems   FlagGems operators through the flaggems route
                 (cuda_flaggems.toml) against the same FlagGems function called
                 directly on CUDA tensors; µs/op

A job is one section under one routing conf ("boxing": cuda.toml, "flaggems":
cuda_flaggems.toml). The conf is fixed at import (FLAGOS_BACKEND_CONFIG), so
every job runs in its own child process; the parent assembles one table with
the targets and writes it as markdown and JSON.

--dry-run runs the same code on a machine without a GPU: the host plugin
against the CPU, tiny sizes, and a stand-in for FlagGems that computes on the
CPU, so that the flaggems route is exercised. Its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

from tools.bench import cpus, flex, gpt2, graph_replay, op_profile, report, timing, tiny_op

ROOT = Path(__file__).resolve().parents[2]

DEFAULT_JOBS = "tiny:boxing,bandwidth:boxing,train:boxing,infer:boxing,flaggems:flaggems,tiny:flaggems"
CONF_FILES = {"boxing": "cuda.toml", "flaggems": "cuda_flaggems.toml"}

# The targets, by section; they apply under the section's own conf
# (PRIMARY_CONF) and to rows marked "target": other rows are for context.
TARGETS = {
    "tiny": ("≤ native + 1.5 µs", lambda r: r["flagos"] - r["native"] <= 1.5),
    "bandwidth": ("≥ 0.97× native", lambda r: r["ratio"] >= 0.97),
    "train": ("≤ 1.03× native", lambda r: r["ratio"] <= 1.03),
    "infer": ("≤ 1.10× native", lambda r: r["ratio"] <= 1.10),
    "flaggems": ("≤ 1.15× direct", lambda r: r["ratio"] <= 1.15),
    "compile-train": ("≤ 1.03× native compiled", lambda r: r["ratio"] <= 1.03),
    "compile-infer": ("≤ 1.05× native compiled", lambda r: r["ratio"] <= 1.05),
    "graph-infer": ("≤ 1.05× native graph replay", lambda r: r["ratio"] <= 1.05),
    "compile-flex": ("≤ 1.05× native compiled", lambda r: r["ratio"] <= 1.05),
}
PRIMARY_CONF = {"tiny": "boxing", "bandwidth": "boxing", "train": "boxing", "infer": "boxing",
                "flaggems": "flaggems", "compile-train": "boxing", "compile-infer": "boxing",
                "graph-infer": "boxing", "compile-flex": "boxing", "zoo": "boxing"}


# ---------------------------------------------------------------- child side

def _row(case: str, unit: str, native: float, flagos: float, ratio: float, repeats: int,
         target: bool = True, baseline: str = "") -> dict:
    return {"case": case, "unit": unit, "native": native, "flagos": flagos, "ratio": ratio,
            "repeats": repeats, "target": target, "baseline": baseline}


def _timed(case: str, unit: str, scale: float, result: dict, native: str, **kw) -> dict:
    return _row(case, unit, result[f"{native}_s"] * scale, result["flagos_s"] * scale,
                result["ratio"], result["repeats"], baseline=kw.pop("baseline", native), **kw)


def section_tiny(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    rows = [_timed(name, "µs/op", 1e6, timing.compare(w, repeats, devices=(native, "flagos")), native)
            for name, w in tiny_op.CASES]
    return rows, []


def section_bandwidth(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    numel, adds = (1 << 16, 5) if dry else (1 << 28, 10)

    def make(device: str):
        a = torch.ones(numel, device=device)
        b = torch.ones(numel, device=device)
        c = torch.empty(numel, device=device)

        def run():
            for _ in range(adds):
                torch.add(a, b, out=c)
        return run, adds

    r = timing.compare(make, repeats, devices=(native, "flagos"), timer=timing.device_events)
    moved = 3 * numel * 4  # two reads and one write of float32
    row = _row(f"torch.add(a, b, out=c), 2^{numel.bit_length() - 1} float32", "TB/s",
               moved / r[f"{native}_s"] / 1e12, moved / r["flagos_s"] / 1e12,
               1.0 / r["ratio"], r["repeats"], baseline=native)
    return [row], []


def _sdpa_note(native: str, dtype) -> str:
    paths = {dev: gpt2.sdpa_path(dev, dtype) for dev in (native, "flagos")}
    return "scaled_dot_product_attention (" + str(dtype).replace("torch.", "") + ") reaches: " + \
        "; ".join(f"{dev}: {', '.join(ops)}" for dev, ops in paths.items())


def section_train(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    """The two sides in two processes that take turns, block by block
    (tools/bench/gpu_train_split.py says why), in a dry run too."""
    from tools.bench import gpu_train_split as split

    cfg = gpt2.config(dry)
    batch, seq, steps = split.DRY if dry else (split.BATCH, split.SEQ, split.STEPS)
    # More process pairs of fewer blocks: a whole process's speed varies more
    # than blocks within it do, even on the same CPUs.
    r = split.measure(pairs=2 if dry else max(2, min(6, repeats // 2)), blocks=4, native=native, dry=dry)
    notes = [_sdpa_note(native, torch.bfloat16),
             f"native and flagos in separate processes taking turns, ABBA: {r['rounds']}",
             f"one step: {r['census']}", f"one call of {steps} steps: {r['op_profile']}",
             f"one call of {steps} steps: {r['kernels']}"]
    case = f"GPT-2 {cfg.n_layer}L/{cfg.n_embd}, batch {batch} x {seq}, bf16 autocast, AdamW"
    rows = [_timed(case, "ms/step", 1e3, r, native)]
    if not dry:
        # The same step on a 2-layer GPT-2 at 2 x 32 tokens: host-bound, so its
        # gap is the per-operator host cost of the training mix (forward,
        # backward on the autograd device thread, foreach AdamW), undiluted.
        small = split.measure(pairs=1, blocks=8, native=native, dry=True)
        small_cfg = gpt2.config(True)
        b, q, _ = split.DRY
        rows.append(_timed(f"GPT-2 {small_cfg.n_layer}L/{small_cfg.n_embd} (host-bound), batch {b} x {q}, "
                           "bf16 autocast, AdamW", "ms/step", 1e3, small, native, target=False))
        notes.append(f"host-bound step: {small['op_profile']}")
    return rows, notes


def section_infer(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    cfg = gpt2.config(dry)
    base = gpt2.build(cfg)
    length, calls = (8, 2) if dry else (32, 10)
    name = f"GPT-2 {cfg.n_layer}L/{cfg.n_embd}, batch 1"
    fwd = timing.compare(gpt2.forward(base, length, calls), repeats, devices=(native, "flagos"))
    dec = timing.compare(gpt2.decode(base, length, length), repeats, devices=(native, "flagos"))
    run, _ = gpt2.forward(base, length, 1)("flagos")
    census = gpt2.census_note(gpt2.route_census(run))
    rows = [_timed(f"{name}, {length}-token forward, no grad", "ms", 1e3, fwd, native),
            _timed(f"{name}, greedy decoding of {length} tokens (KV cache)", "ms", 1e3, dec, native,
                   target=False)]
    profiled = op_profile.compare_note(gpt2.forward(base, length, 1), native)
    return rows, [_sdpa_note(native, torch.float32), f"forward: {census}", f"forward: {profiled}"]


def section_compile_train(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    """(c) with both sides compiled, in two processes taking turns as (c) does."""
    from tools.bench import gpu_train_split as split

    cfg = gpt2.config(dry)
    batch, seq, steps = split.DRY if dry else (split.BATCH, split.SEQ, split.STEPS)
    # Each pair compiles both sides afresh (a minute); the step is host-bound,
    # so pairs differ more than blocks do: --repeats 16 gives four.
    pairs = 1 if dry or repeats < 8 else min(4, repeats // 4)
    r = split.measure(pairs=pairs, blocks=4, timeout=400, native=native, dry=dry, compiled=True)
    case = f"GPT-2 {cfg.n_layer}L/{cfg.n_embd} compiled, batch {batch} x {seq}, bf16 autocast, AdamW"
    notes = [f"native compiled and flagos compiled in separate processes taking turns, ABBA: {r['rounds']}",
             f"one call of {steps} steps: {r['op_profile']}", f"one call of {steps} steps: {r['kernels']}"]
    return [_timed(case, "ms/step", 1e3, r, native, baseline=f"{native} compiled")], notes


def section_compile_infer(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    cfg = gpt2.config(dry)
    length, calls = (8, 2) if dry else (32, 10)
    make = gpt2.forward(gpt2.build(cfg), length, calls, compiled=True)
    built, graphs = {}, []  # compiled once (at the first call), timed and profiled
    for dev in (native, "flagos"):
        counters = torch._dynamo.utils.counters
        counters.clear()
        built[dev] = make(dev)
        built[dev][0]()
        breaks = "; ".join(f"{why} ×{n}" for why, n in counters["graph_break"].items()) or "none"
        graphs.append(f"{dev}: {counters['stats']['unique_graphs']} graphs, graph breaks: {breaks}")
    r = timing.compare(built.__getitem__, repeats, devices=(native, "flagos"))
    case = f"GPT-2 {cfg.n_layer}L/{cfg.n_embd} compiled, batch 1, {length}-token forward, no grad"
    profile = op_profile.note_from({dev: op_profile.self_cpu_by_op(run) for dev, (run, _) in built.items()},
                                   native)
    return ([_timed(case, "ms", 1e3, r, native, baseline=f"{native} compiled")],
            ["dynamo: " + "; ".join(graphs), f"{calls} forwards: {profile}"])


def section_graph_infer(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    if dry:  # host.toml routes every operator to the cpu route, which runs at once: nothing to capture
        return [], ["dry run: skipped (the host plugin's graphs capture the native route only)"]
    cfg = gpt2.config(dry)
    length, calls = 32, 10
    base = gpt2.build(cfg)
    r = timing.compare(graph_replay.replay(base, length, calls), repeats, devices=(native, "flagos"))
    case = f"GPT-2 {cfg.n_layer}L/{cfg.n_embd}, batch 1, {length}-token forward, graph replay"
    # The replay against flagos eager, same process: what capture buys.
    runs = {"graph": graph_replay.replay(base, length, calls)("flagos")[0],
            "eager": gpt2.forward(base, length, calls)("flagos")[0]}
    runs["eager"]()
    ms = {k: statistics.median(timing.wall_clock(run, "flagos") for _ in range(repeats)) / calls * 1e3
          for k, run in runs.items()}
    notes = [f"flagos eager {ms['eager']:.3g} ms, flagos graph replay {ms['graph']:.3g} ms: "
             f"{ms['eager'] / ms['graph']:.2f}× faster (target ≥ 3×)"]
    return [_timed(case, "ms", 1e3, r, native, baseline=f"{native} graph replay")], notes


def section_compile_flex(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    shape, dtype, calls = (flex.DRY, torch.float32, 2) if dry else (flex.FULL, torch.bfloat16, 10)
    rows = []
    for backward in (False,) if dry else (False, True):  # the CPU's flex template has no backward
        r = timing.compare(flex.workload(shape, dtype, backward, calls), repeats, devices=(native, "flagos"))
        rows.append(_timed(flex.describe(shape, dtype, backward), "ms", 1e3, r, native,
                           baseline=f"{native} compiled"))
    return rows, []


# The FlagGems operators of (e): how torch reaches each on flagos, and how the
# route calls FlagGems' function (schema order, kwarg-only by keyword).
FLAGGEMS_OPS = {
    "add.Tensor": ("torch.add(a, b)", 2, lambda a, b: torch.add(a, b), lambda fn, a, b: fn(a, b, alpha=1)),
    "mul.Tensor": ("torch.mul(a, b)", 2, lambda a, b: torch.mul(a, b), lambda fn, a, b: fn(a, b)),
    "_softmax": ("torch.softmax(x, -1)", 1, lambda x: torch.softmax(x, -1), lambda fn, x: fn(x, -1, False)),
    "native_layer_norm": (
        "F.layer_norm(x, (n,), w, b)", 3,
        lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        lambda fn, x, w, b: fn(x, [x.shape[-1]], w, b, 1e-5)),
}
# Where the usual torch call above goes through a composite wrapper first
# (softmax -> _softmax, F.layer_norm -> layer_norm -> native_layer_norm): the
# routed operator's own binding, for a context row that leaves the wrapper out.
FLAGGEMS_ATEN_CALLS = {
    "_softmax": ("torch._softmax(x, -1, False)", lambda x: torch._softmax(x, -1, False)),
    "native_layer_norm": ("torch.native_layer_norm(x, [n], w, b, 1e-5)",
                          lambda x, w, b: torch.native_layer_norm(x, [x.shape[-1]], w, b, 1e-5)),
}


def _flaggems_inputs(count: int, shape: tuple[int, int], device: str) -> list:
    g = torch.Generator().manual_seed(0)
    x = [torch.randn(shape, generator=g).to(device)]
    if count == 2:
        x.append(torch.randn(shape, generator=g).to(device))
    elif count == 3:
        x += [torch.randn(shape[-1], generator=g).to(device), torch.randn(shape[-1], generator=g).to(device)]
    return x


def section_flaggems(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    import torch_fl
    from torch_fl import _flaggems, _routing

    shapes = [(8, 16), (64, 64)] if dry else [(8, 128), (4096, 4096)]
    calls = 20 if dry else 200
    rows, notes = [], [f"FlagGems: {_flaggems.status()}"]
    for op, (torch_call, count, via_torch, direct) in FLAGGEMS_OPS.items():
        route = torch_fl.routes(op)[0]
        fn = _routing._python_impls.get(op)
        if route["route"] != "flaggems" or fn is None:
            notes.append(f"{op} not measured: its route is {route['route']} ({route['why']})"
                         + ("" if fn else ", and FlagGems registered no function for it"))
            continue
        for shape in shapes:
            def make(device: str, shape=shape, registered=False, flagos_call=via_torch):
                args = _flaggems_inputs(count, shape, device)
                through_torch = device == "flagos" or registered
                torch_call = flagos_call if device == "flagos" else via_torch
                call = (lambda: torch_call(*args)) if through_torch else (lambda: direct(fn, *args))

                def run():
                    for _ in range(calls):
                        call()
                return run, calls
            case = f"{op}: {torch_call}, {shape[0]}x{shape[1]} float32"
            r = timing.compare(make, repeats, devices=(native, "flagos"))
            rows.append(_timed(case, "µs/op", 1e6, r, native,
                               baseline=f"FlagGems {getattr(fn, '__name__', op)}() on {native}"))
            # The same torch call on native tensors with FlagGems registered
            # as the native kernel (what flag_gems.enable() does): both sides
            # pay torch's own dispatch, so the gap is the route's alone.
            with _registered_for(native, op, fn):
                r = timing.compare(lambda dev, shape=shape: make(dev, shape, registered=dev == native), repeats,
                                   devices=(native, "flagos"))
            rows.append(_timed(case, "µs/op", 1e6, r, native, target=False,
                               baseline=f"{torch_call} on {native}, FlagGems registered for {native.upper()}"))
            if op in FLAGGEMS_ATEN_CALLS:
                # flagos through the routed operator's own binding, against the
                # direct call: the route and torch's dispatcher, without the wrapper.
                aten_text, aten_call = FLAGGEMS_ATEN_CALLS[op]
                r = timing.compare(lambda dev, shape=shape: make(dev, shape, flagos_call=aten_call), repeats,
                                   devices=(native, "flagos"))
                rows.append(_timed(f"{op}: {aten_text}, {shape[0]}x{shape[1]} float32", "µs/op", 1e6, r, native,
                                   target=False, baseline=f"FlagGems {getattr(fn, '__name__', op)}() on {native}"))
    return rows, notes


@contextlib.contextmanager
def _registered_for(native: str, op: str, fn):
    """FlagGems' `fn` as aten::`op`'s kernel for the native device while the
    block runs (a torch.library registration, as flag_gems.use_gems makes);
    a no-op on the CPU of a dry run."""
    if native == "cpu":
        yield
        return
    lib = torch.library.Library("aten", "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
            lib.impl(op, fn, native.upper())
        yield
    finally:
        lib._destroy()


def section_zoo(native: str, dry: bool, repeats: int) -> tuple[list, list]:
    from tools.bench import zoo

    return zoo.section(native, dry, repeats, _timed)


SECTIONS = {"tiny": section_tiny, "bandwidth": section_bandwidth, "train": section_train,
            "infer": section_infer, "flaggems": section_flaggems,
            "compile-train": section_compile_train, "compile-infer": section_compile_infer,
            "graph-infer": section_graph_infer, "compile-flex": section_compile_flex, "zoo": section_zoo}


def _install_flaggems_standin() -> None:
    """--dry-run only: a `flag_gems` module whose functions compute on the CPU
    (through CPU copies of flagos operands), and FLAGOS_OP_ overrides routing
    FLAGGEMS_OPS to it, so that the flaggems route runs on the host plugin."""
    import types

    from torch.utils._pytree import tree_map

    def standin(aten_op):
        def fn(*args, **kwargs):
            device = next(a.device for a in args if isinstance(a, torch.Tensor))
            to_cpu = lambda t: t.cpu() if isinstance(t, torch.Tensor) else t  # noqa: E731
            out = aten_op(*tree_map(to_cpu, args), **tree_map(to_cpu, kwargs))
            return tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t, out)
        fn.__name__ = f"standin_{aten_op.__name__}"
        return fn

    module = types.ModuleType("flag_gems")
    module.__version__ = "dry-run stand-in"
    def aten(op: str):
        name, _, overload = op.partition(".")
        return getattr(getattr(torch.ops.aten, name), overload or "default")

    module._FULL_CONFIG = tuple((op, standin(aten(op))) for op in FLAGGEMS_OPS)
    sys.modules["flag_gems"] = module
    for op in FLAGGEMS_OPS:
        os.environ["FLAGOS_OP_" + op.replace(".", "__")] = "flaggems"


def _gpu_facts() -> dict:
    facts = {"gpu": None, "driver": None, "cuda": torch.version.cuda}
    if torch.cuda.is_available():
        facts["gpu"] = torch.cuda.get_device_name(0)
        try:
            facts["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            facts["driver"] = "unknown (nvidia-smi failed)"
    for pkg in ("triton", "flag_gems", "transformers"):
        try:
            facts[pkg] = __import__(pkg).__version__
        except Exception as exc:  # noqa: BLE001 - any import failure is just "absent" here
            facts[pkg] = f"absent ({type(exc).__name__})"
    return facts


def child(section: str, conf: str, dry: bool, repeats: int, out: Path) -> int:
    if dry and conf == "flaggems":
        _install_flaggems_standin()
    import torch_fl

    from tools.bench import machine

    result: dict = {"section": section, "conf": conf}
    if section == "info":
        result.update(machine=machine.describe(), facts=_gpu_facts(),
                      confs_dir=torch_fl._routing.confs_dir())
    else:
        native = "cpu" if dry else "cuda"
        plugin = torch_fl.plugin_info()["name"]
        if not dry and not (torch.cuda.is_available() and plugin == "cuda"):
            raise RuntimeError(f"[flagos] tools.bench.gpu needs CUDA and the cuda flagos plugin (CUDA available: "
                               f"{torch.cuda.is_available()}, plugin: {plugin}); --dry-run runs without them")
        result["backend_config"] = torch_fl.backend_config_path()
        result["plugin"] = plugin
        result["rows"], result["notes"] = SECTIONS[section](native, dry, repeats)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


# --------------------------------------------------------------- parent side

def _run_child(section: str, conf: str, args, conf_path: str | None, tmp: Path) -> dict:
    out = tmp / f"{section}-{conf}.json"
    env = dict(os.environ)
    if conf_path:
        env["FLAGOS_BACKEND_CONFIG"] = conf_path
    cmd = [sys.executable, "-m", "tools.bench.gpu", "--child", section, "--conf", conf,
           "--child-out", str(out), "--repeats", str(args.repeats)] + (["--dry-run"] if args.dry_run else [])
    start = time.monotonic()
    print(f"  {section} [{conf}] ...", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=args.job_timeout)
        failed = proc.returncode != 0 or not out.exists()
        error = f"exit {proc.returncode}: {proc.stderr[-3000:]}" if failed else ""
    except subprocess.TimeoutExpired as exc:
        tail = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        failed, error = True, f"timed out after {args.job_timeout} s: {tail[-3000:]}"
    took = time.monotonic() - start
    print(f"  {section} [{conf}] {'FAILED' if failed else 'done'} in {took:.0f} s", file=sys.stderr, flush=True)
    if failed:
        return {"section": section, "conf": conf, "error": error, "seconds": took}
    result = json.loads(out.read_text())
    result["seconds"] = took
    return result


def _verdict(section: str, conf: str, row: dict) -> tuple[str, str]:
    if not row["target"] or conf != PRIMARY_CONF[section]:
        return "—", ""
    text, check = TARGETS[section]
    return text, "pass" if check(row) else "FAIL"


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def render(info: dict, results: list[dict], dry: bool) -> tuple[str, list[dict]]:
    m, f = info.get("machine", {}), info.get("facts", {})
    head = ("Dry run (host plugin against the CPU, tiny sizes: the numbers mean nothing). " if dry else "")
    head += (f"Date {m.get('date')}; GPU {f.get('gpu')}, driver {f.get('driver')}, CUDA {f.get('cuda')}; "
             f"{m.get('cpu')}, {m.get('cores')} cores, {m.get('os')}; Python {m.get('python')}, "
             f"torch {m.get('torch')}, triton {f.get('triton')}, flag_gems {f.get('flag_gems')}, "
             f"transformers {f.get('transformers')}; torch_fl {m.get('torch_fl')} ({m.get('commit')}), "
             f"plugin {m.get('plugin')}; load average at start {m.get('load_average')}; "
             f"every job on {info.get('cpus', 'any CPU')}.")
    lines = [head, "",
             "| Section | Case | conf | unit | baseline | baseline value | flagos | flagos / baseline "
             "| flagos − baseline | repeats | target | result |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|---|---|"]
    rows, notes, failures = [], [], []
    for res in results:
        sec, conf = res["section"], res["conf"]
        if "error" in res:
            lines.append(f"| {sec} | (job failed: see below) | {conf} | | | | | | | | | FAIL |")
            failures += ["", f"{sec} [{conf}] failed after {res['seconds']:.0f} s:", "", "```",
                         res["error"].rstrip(), "```"]
            continue
        for note in res.get("notes", []):
            notes.append(f"{sec} [{conf}]: {note}")
        notes.append(f"{sec} [{conf}]: conf {res.get('backend_config')}, {res['seconds']:.0f} s")
        for r in res["rows"]:
            target, verdict = _verdict(sec, conf, r)
            rows.append(dict(r, section=sec, conf=conf, target_text=target, result=verdict))
            lines.append(f"| {sec} | {r['case']} | {conf} | {r['unit']} | {r['baseline']} | {_fmt(r['native'])} "
                         f"| {_fmt(r['flagos'])} | {r['ratio']:.3f}× | {r['flagos'] - r['native']:+.3g} "
                         f"| {r['repeats']} | {target} | {verdict or '—'} |")
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines + failures), rows


def parent(args) -> int:
    jobs = [tuple(j.split(":", 1)) for j in args.jobs.split(",") if j]
    for section, conf in jobs:
        if section not in SECTIONS or conf not in CONF_FILES:
            sys.exit(f"[flagos] unknown job {section}:{conf} (sections {', '.join(SECTIONS)}; "
                     f"confs {', '.join(CONF_FILES)})")
    # Every job, and the processes it starts, on the same CPUs (tools/bench/cpus.py).
    pinned = "any CPU (--cpus all)"
    if args.cpus != "all":
        chosen, pinned = (cpus.choose(4) if args.cpus == "auto"
                          else (cpus.parse_cpulist(args.cpus), f"CPUs {args.cpus} (--cpus)"))
        cpus.pin(chosen)
    with tempfile.TemporaryDirectory() as tmp:
        # Describing the machine must not depend on the shipped confs.
        empty = Path(tmp) / "empty.toml"
        empty.write_text("[conf]\n")
        info = _run_child("info", "boxing", args, str(empty), Path(tmp))
        if "error" in info:
            print(f"[flagos] cannot describe the machine: {info['error']}", file=sys.stderr)
            return 1
        info["cpus"] = pinned
        confs_dir = args.confs_dir or info["confs_dir"]
        results = [_run_child(s, c, args, None if args.dry_run else os.path.join(confs_dir, CONF_FILES[c]),
                              Path(tmp)) for s, c in jobs]
    text, rows = render(info, results, args.dry_run)
    report.emit(text, args.md)
    if args.json:
        args.json.write_text(json.dumps({"dry_run": args.dry_run, "machine": info["machine"],
                                         "facts": info["facts"], "rows": rows,
                                         "jobs": results}, indent=2) + "\n")
    failed_jobs = sum("error" in r for r in results)
    verdicts = [r["result"] for r in rows if r["result"]]
    print(f"targets: {verdicts.count('pass')} pass, {verdicts.count('FAIL')} FAIL; "
          f"jobs: {len(results) - failed_jobs} ran, {failed_jobs} failed", file=sys.stderr)
    return 1 if failed_jobs else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.gpu")
    parser.add_argument("--json", type=Path, help="write the rows and raw job results here")
    parser.add_argument("--md", type=Path, help="write the markdown table here")
    parser.add_argument("--repeats", type=int, help="repeats per case (default 15; 3 with --dry-run)")
    parser.add_argument("--jobs", default=DEFAULT_JOBS, help=f"section:conf,... (default {DEFAULT_JOBS})")
    parser.add_argument("--confs-dir", help="installed routing confs (default: torch_fl's)")
    parser.add_argument("--job-timeout", type=int, default=420, help="seconds per child job")
    parser.add_argument("--dry-run", action="store_true", help="no GPU: host plugin against the CPU, tiny sizes")
    parser.add_argument("--cpus", default="auto",
                        help="CPUs every job runs on: auto (4 near the GPU, one per core), all (no pinning), "
                             "or a cpulist such as 0-3")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--conf", default="boxing", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.dry_run else 15
    if args.child:
        return child(args.child, args.conf, args.dry_run, args.repeats, args.child_out)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
