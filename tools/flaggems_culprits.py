"""Which FlagGems operators make a small GPT-2's training step wrong, found on
native CUDA (FlagGems registered for CUDA, no torch_fl).

  python -m tools.flaggems_culprits [--fixed] [--tolerance 1e-2] [--json FILE]
  python -m tools.flaggems_culprits --dry-run   (no GPU: the CPU, with two ops
                                                 made wrong on purpose)

On the H200 (session 13, FlagGems 5.0.2, Triton 3.6) GPT-2's backward with
FlagGems came out wrong natively as through the flaggems route: gradients off
by a relative error of about 1, and the loss tensor overwritten during the
backward. FlagGems' native_layer_norm_backward, which takes a 3-D input's
first dimension as its row count (FlagGems #5392), explains it; the flaggems
route wraps that function (torch_fl/_flaggems_fixes.py). --fixed applies the
same wrappers here, to find what else is wrong: an operator found is one for
_flaggems_fixes.py or for cuda_flaggems.toml to send to torch's CUDA kernels.

Steps, each a forward and backward of the same model against the CPU's:
every operator the step calls that FlagGems implements, registered together;
then each one alone; then all but each one. A row's error is the largest
relative error over the loss (after the forward and after the backward) and
every gradient. Prints a markdown table; exits 0 when every run matches, 1
when some do not, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import sys
import time
import warnings
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tools.flaggems_layouts import relative_error


def _op_name(func) -> str:
    """aten::mul.Tensor -> mul.Tensor, aten::mm.default -> mm (as FlagGems and
    the routing confs name ops)."""
    name = func._schema.name.split("::", 1)[1]
    overload = func._schema.overload_name
    return f"{name}.{overload}" if overload else name


class _Recorder(TorchDispatchMode):
    """The aten ops a region calls below autograd (the kernels a device's
    registration replaces), backward included."""

    def __init__(self):
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(_op_name(func))
        return func(*args, **(kwargs or {}))


class _Skewed(TorchDispatchMode):
    """--dry-run's stand-in for a wrong FlagGems kernel: the named ops'
    floating results scaled by 1.5."""

    def __init__(self, ops):
        super().__init__()
        self.wrong = set(ops)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if _op_name(func) not in self.wrong:
            return out
        skew = lambda t: t * 1.5 if isinstance(t, torch.Tensor) and t.is_floating_point() else t  # noqa: E731
        return tuple(map(skew, out)) if isinstance(out, tuple) else skew(out)


def _model():
    import transformers

    cfg = transformers.GPT2Config(n_layer=3, n_embd=256, n_head=4, vocab_size=1000, n_positions=128,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(cfg)


def _step(base, ids, device: str) -> dict[str, torch.Tensor]:
    """Loss after the forward, what that tensor holds after the backward,
    and every gradient, on the CPU."""
    model = copy.deepcopy(base).to(device)
    model.tie_weights()
    out = model(ids.to(device), labels=ids.to(device))
    result = {"loss": out.loss.detach().cpu()}
    out.loss.backward()
    result["loss after backward"] = out.loss.detach().cpu()
    result.update({f"grad {n}": p.grad.cpu() for n, p in model.named_parameters()})
    return result


def _worst(got: dict, want: dict) -> tuple[float, str]:
    errors = {k: relative_error(got[k], want[k]) for k in want}
    key = max(errors, key=lambda k: (errors[k] != errors[k], errors[k]))  # NaN first
    return errors[key], key


class Native:
    """FlagGems' functions registered for CUDA, a chosen few at a time."""

    device = "cuda"
    where = "native CUDA"

    def __init__(self, fixed: bool):
        import flag_gems

        fix = _load_fixes().fixed if fixed else (lambda op, fn: fn)
        self.version = getattr(flag_gems, "__version__", "?") + (", with torch_fl's fixes" if fixed else "")
        self.table = {}
        for item in flag_gems._FULL_CONFIG:
            if len(item) >= 3 and callable(item[2]) and not item[2]():
                continue  # FlagGems' own condition (a torch version, say)
            self.table.setdefault(item[0], fix(item[0], item[1]))

    @contextlib.contextmanager
    def registered(self, ops):
        lib = torch.library.Library("aten", "IMPL")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "overriding a previously registered kernel", per op
                for op in ops:
                    lib.impl(op, self.table[op], "CUDA")
            yield
        finally:
            lib._destroy()


def _load_fixes():
    """torch_fl/_flaggems_fixes.py by its path: importing it through the
    package would import torch_fl, which this tool runs without."""
    path = Path(__file__).resolve().parents[1] / "python" / "torch_fl" / "_flaggems_fixes.py"
    spec = importlib.util.spec_from_file_location("_flaggems_fixes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class DryRun:
    """The CPU against itself, two ops made wrong: checks this tool's logic."""

    device = "cpu"
    where = "the CPU, two ops skewed"
    version = "dry run"
    wrong = ("mm", "native_layer_norm_backward")

    def __init__(self):
        self.table = None  # every op the step calls is a candidate

    @contextlib.contextmanager
    def registered(self, ops):
        with _Skewed(set(ops) & set(self.wrong)):
            yield


def _device_works(device: str) -> bool:
    try:
        return torch.ones(2, device=device).sum().item() == 2.0
    except Exception:
        return False


def find(backend, tolerance: float) -> dict:
    base = _model()
    ids = torch.randint(0, base.config.vocab_size, (2, 64), generator=torch.Generator().manual_seed(0))
    want = _step(base, ids, "cpu")
    recorder = _Recorder()
    with recorder:
        _step(base, ids, backend.device)
    used = sorted(recorder.ops if backend.table is None else recorder.ops & backend.table.keys())

    lost = []  # the trial after which the device stopped working

    def trial(ops) -> dict:
        if lost:  # a kernel's illegal access poisons the CUDA context for good
            return {"error": float("inf"), "where": f"not run: the device failed after {lost[0]}", "ok": False,
                    "seconds": 0.0}
        start = time.perf_counter()
        try:
            with backend.registered(ops):
                error, where = _worst(_step(base, ids, backend.device), want)
        except Exception as exc:  # FlagGems raising is a finding, not the end
            error, where = float("inf"), f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
            if not _device_works(backend.device):
                lost.append(ops[0] if len(ops) == 1 else f"a run of {len(ops)} ops")
        return {"error": error, "where": where, "ok": error <= tolerance,
                "seconds": round(time.perf_counter() - start, 2)}

    report = {"flaggems": backend.version, "where": backend.where, "tolerance": tolerance, "ops": used,
              "all": trial(used)}
    report["alone"] = {op: trial([op]) for op in used}
    report["all but"] = {op: trial([o for o in used if o != op]) for op in used}
    return report


def markdown(report: dict) -> str:
    def cell(t):
        return f"{t['error']:.2e} ({t['where']})" if not t["ok"] else f"{t['error']:.1e}"

    lines = [f"FlagGems {report['flaggems']}: GPT-2 (3 layers, 256 wide) forward and backward on {report['where']} "
             f"against the CPU, largest relative error (tolerance {report['tolerance']:g})",
             "", f"All {len(report['ops'])} operators registered: {cell(report['all'])}", "",
             "| operator | alone | all but it |", "|---|---|---|"]
    for op in report["ops"]:
        lines.append(f"| {op} | {cell(report['alone'][op])} | {cell(report['all but'][op])} |")
    wrong_alone = [op for op in report["ops"] if not report["alone"][op]["ok"]]
    fixing = [op for op in report["ops"] if report["all but"][op]["ok"]]
    lines += ["", f"Wrong alone: {', '.join(wrong_alone) or 'none'}",
              f"All but it matches: {', '.join(fixing) or 'none'}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tolerance", type=float, default=1e-2, help="relative error (TF32-level: 1e-2)")
    parser.add_argument("--json", help="write the whole report here")
    parser.add_argument("--fixed", action="store_true",
                        help="FlagGems' functions wrapped as the flaggems route wraps them (_flaggems_fixes.py)")
    parser.add_argument("--dry-run", action="store_true", help="no GPU: the CPU, two ops made wrong on purpose")
    args = parser.parse_args(argv)
    try:
        import transformers  # noqa: F401
        if args.dry_run:
            backend = DryRun()
        elif not torch.cuda.is_available():
            raise RuntimeError("this torch sees no CUDA device")
        else:
            backend = Native(args.fixed)
    except Exception as exc:
        print(f"[flaggems_culprits] cannot run: {exc}", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    report = find(backend, args.tolerance)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print(markdown(report))
    trials = [report["all"], *report["alone"].values(), *report["all but"].values()]
    return 0 if all(t["ok"] for t in trials) else 1


if __name__ == "__main__":
    sys.exit(main())
