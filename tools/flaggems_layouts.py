"""Which operand layouts FlagGems' pointwise kernels get right: mul/add of
(64, 256) float32 operands in the layouts a model makes (broadcast rows and
columns, expanded and transposed operands, autograd's expanded gradient of a
sum), each result's relative error against the CPU.

  python -m tools.flaggems_layouts native   FlagGems itself, on native CUDA
                                            (flag_gems.enable(); no torch_fl)
  python -m tools.flaggems_layouts flagos   through torch_fl's flaggems route
                                            (FLAGOS_BACKEND_CONFIG picks the
                                            routes, e.g. cuda_flaggems.toml)

On the H200 (session 12, FlagGems 5.0.2, Triton 3.6) `native` got the
expanded, column and transposed cases wrong (relative errors 1 to 2.5): the
reason the flaggems route hands such operands over contiguous
(core/routes/python_route.h). Run it again on a new FlagGems to see whether
that is still needed. Prints one markdown table; exits 1 when a case is off,
2 when it cannot run.
"""

from __future__ import annotations

import argparse
import sys

import torch


def _relative(got: torch.Tensor, want: torch.Tensor) -> float:
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def _grad_of(f, x: torch.Tensor) -> torch.Tensor:
    leaf = x.detach().clone().requires_grad_()
    f(leaf).backward()
    return leaf.grad


# name -> function of (x, y), both (64, 256), on one device.
CASES = {
    "same layout": lambda x, y: x * y,
    "0-dim operand": lambda x, y: x * y[0, 0],
    "broadcast row (256,)": lambda x, y: x + y[0],
    "broadcast column (64, 1)": lambda x, y: x * y[:, :1].contiguous(),
    "expanded row, first": lambda x, y: y[0].expand(64, 256) * x,
    "expanded 0-dim, second": lambda x, y: x * y[0, 0].expand(64, 256),
    "transposed beside contiguous": lambda x, y: x.t() * y.t().contiguous(),
    "both transposed": lambda x, y: x.t() * y.t(),
    "grad of (x * y).sum()": lambda x, y: _grad_of(lambda a: a.mul(y).sum(), x),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("native", "flagos"))
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args(argv)
    if args.mode == "native":
        try:
            import flag_gems
        except ImportError as exc:
            print(f"[flaggems_layouts] cannot run natively: {exc}", file=sys.stderr)
            return 2
        if not torch.cuda.is_available():
            print("[flaggems_layouts] cannot run natively: this torch sees no CUDA device", file=sys.stderr)
            return 2
        flag_gems.enable()
        device, what = "cuda", f"FlagGems {getattr(flag_gems, '__version__', '?')} on native CUDA"
    else:
        import torch_fl

        device, what = "flagos", f"flagos, mul.Tensor routed to {torch_fl.routes('mul.Tensor')[0]['route']}"
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(64, 256, generator=g), torch.randn(64, 256, generator=g)
    xd, yd = x.to(device), y.to(device)
    print(f"| {what}: case | relative error vs CPU |\n|---|---:|")
    off = 0
    for name, f in CASES.items():
        try:
            error = _relative(f(xd, yd), f(x, y))
            cell = f"{error:.2e}"
            off += not error <= args.tolerance
        except Exception as exc:  # one case's failure is a row, not the end
            cell = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
            off += 1
        print(f"| {name} | {cell} |")
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
