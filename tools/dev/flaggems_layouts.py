"""Which operand layouts (and, for mul, dtypes) FlagGems' kernels get right:
(64, 256) float32 operands in the forms a model makes (broadcast rows and
columns, expanded and transposed operands, autograd's expanded gradient of a
sum, strided slices read and written, mixed dtypes), each result's relative
error against the CPU, and its dtype.

  python -m tools.dev.flaggems_layouts native   FlagGems itself, on native CUDA
                                                (flag_gems.enable(); no torch_fl)
  python -m tools.dev.flaggems_layouts flagos   through torch_fl's flaggems route
                                                (FLAGOS_BACKEND_CONFIG picks the
                                                routes, e.g. cuda_flaggems.toml)

A reproducer to report FlagGems' layout bugs upstream, and to see whether a
new FlagGems still needs the route's workarounds. Natively on Hopper,
FlagGems 5.0.2 (Triton 3.6) gets the expanded, column and transposed cases
wrong (relative errors 1 to 2.5), and the slice and mixed-dtype ones: on
compute capability 9 its Hopper functions replace the generic ones for mul,
sqrt, sqrt_ and fill and index operands flat (element i at data_ptr + i), as
its generic zero_, slice_backward and hardsigmoid do everywhere. The
flaggems route hands them operands of one dense layout and dtype
(core/routes/flaggems_operands.h, torch_fl/_flaggems_fixes.py), so through it
every case is right. Prints one markdown table; exits 1 when a case is off, 2
when it cannot run.
"""

from __future__ import annotations

import argparse
import sys

import torch


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """|got - want| / |want| in float64 on the CPU."""
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def _grad_of(f, x: torch.Tensor) -> torch.Tensor:
    leaf = x.detach().clone().requires_grad_()
    f(leaf).backward()
    return leaf.grad


def _in_place(x: torch.Tensor, write) -> torch.Tensor:
    """`write` applied to a copy of x (an in-place op on a view of it)."""
    z = x.clone()
    write(z)
    return z


def _slice_grad(x: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """x's gradient through x[1:3] for `grad` (slice_backward)."""
    leaf = x.detach().clone().requires_grad_()
    leaf[1:3].backward(grad)
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
    "sqrt of a strided slice": lambda x, y: torch.sqrt(x.abs()[:, ::2]),
    "sqrt_ of a column": lambda x, y: _in_place(x.abs(), lambda z: z[:, 3].sqrt_()),
    "fill_ of a column": lambda x, y: _in_place(x, lambda z: z[:, 1].fill_(-1.0)),
    "zero_ of a column": lambda x, y: _in_place(x, lambda z: z[:, 2].zero_()),
    "backward of a slice, transposed gradient": lambda x, y: _slice_grad(x, y[:2].t().contiguous().t()),
    "mul, bfloat16 by float32": lambda x, y: x.bfloat16() * y,
    "mul, bool by float32": lambda x, y: (x > 0) * y,
    "mul, 0-dim by a host 0-dim float64": lambda x, y: x[0, 0] * torch.tensor(2.0, dtype=torch.float64),
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
            got, want = f(xd, yd), f(x, y)
            error = relative_error(got, want)
            cell = f"{error:.2e}" + ("" if got.dtype == want.dtype else f" (dtype {got.dtype}, not {want.dtype})")
            off += not (error <= args.tolerance and got.dtype == want.dtype)
        except Exception as exc:  # one case's failure is a row, not the end
            cell = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
            off += 1
        print(f"| {name} | {cell} |")
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
