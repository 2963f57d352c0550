"""python -m tools.bench.route_cost [--repeats R] [--calls N] [--md PATH]

The flaggems route's own host cost, taken apart. tools.bench.gpu (e) times
FlagGems' layer_norm through the route against the same function called on
native tensors; this swaps the registered function for ones that do less,
so that what is left is the route's:

  operands   returns its operands: boxing, the Python call and unboxing
  fresh      returns three new tensors, as layer_norm does (two allocations
             more per side; the route also re-labels what Python made)
  flaggems   FlagGems' own function (absent where flag_gems is not installed)

Each case times torch.native_layer_norm on flagos tensors (the route) and
the same Python function called directly on tensors of the native device
(cuda, or the CPU where there is none), 8x128 float32, in µs per call until
the calls return. aten::native_layer_norm is routed to flaggems by this
process (FLAGOS_OP_native_layer_norm), with a stand-in `flag_gems` module
where the real one is not installed.
"""

from __future__ import annotations

import argparse
import os
import sys
import types
from pathlib import Path

os.environ["FLAGOS_OP_native_layer_norm"] = "flaggems"

import torch  # noqa: E402


def _flaggems_function():
    """FlagGems' native_layer_norm, or None after installing a stand-in
    module (so that the route is still flaggems)."""
    try:
        import flag_gems
    except ImportError:
        standin = types.ModuleType("flag_gems")
        standin.__version__ = "stand-in"
        standin._FULL_CONFIG = (("native_layer_norm", lambda *a: a),)
        sys.modules["flag_gems"] = standin
        return None
    return next(item[1] for item in flag_gems._FULL_CONFIG if item[0] == "native_layer_norm")


def _cases(flaggems):
    def operands(x, shape, w, b, eps):
        return x, w, b

    def fresh(x, shape, w, b, eps):
        rows = x.shape[0]
        return torch.empty_like(x), torch.empty(rows, device=x.device), torch.empty(rows, device=x.device)

    cases = {"operands": operands, "fresh": fresh}
    if flaggems is not None:
        cases["flaggems"] = flaggems
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--md", type=Path)
    args = parser.parse_args(argv)

    flaggems = _flaggems_function()
    import torch_fl
    from torch_fl import _routing

    from tools.bench import report, timing

    route = torch_fl.routes("native_layer_norm")[0]
    if route["route"] != "flaggems":
        print(f"[flagos] aten::native_layer_norm is routed to {route['route']} ({route['why']}), not flaggems")
        return 1
    native = "cuda" if torch.cuda.is_available() else "cpu"
    lines = [f"The flaggems route's own cost: torch.native_layer_norm on flagos, routed to a Python function, "
             f"against the function called directly on {native} tensors; 8x128 float32, {args.calls} calls per "
             f"block, {args.repeats} blocks (medians).", "",
             f"| registered function | {native} direct µs | flagos route µs | route − direct µs | ratio |",
             "|---|---:|---:|---:|---:|"]
    for name, fn in _cases(flaggems).items():
        _routing._python_impls["native_layer_norm"] = fn  # the core looks it up on every call

        def make(device: str, fn=fn):
            g = torch.Generator().manual_seed(0)
            x, w, b = (torch.randn(shape, generator=g).to(device) for shape in ((8, 128), (128,), (128,)))
            call = ((lambda: torch.native_layer_norm(x, [128], w, b, 1e-5)) if device == "flagos"
                    else (lambda: fn(x, [128], w, b, 1e-5)))

            def run():
                for _ in range(args.calls):
                    call()
            return run, args.calls

        r = timing.compare(make, args.repeats, warmup=2, devices=(native, "flagos"))
        n, f = r[f"{native}_s"] * 1e6, r["flagos_s"] * 1e6
        lines.append(f"| {name} | {n:.2f} | {f:.2f} | {f - n:+.2f} | {r['ratio']:.3f} |")
    report.emit("\n".join(lines), args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
