"""The operators the `tileops` route serves: for each aten operator (as
confs spell it), the TileOps op class that reproduces it and how the
operator's arguments become the class's parameters.

Pure data (no torch, no tileops): the conf generator reads it to write the
`tileops = [...]` list of cuda.toml, and the core's catalog gets its keys to
know what the tileops family implements where TileOps cannot be loaded.
Each class is one TileOps manifest entry whose `ref_api` is the torch
function named in the comment; test_tileops.py checks the pairs against the
manifest when the package is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

FLOAT = ("float16", "bfloat16", "float32")


@dataclass(frozen=True)
class Entry:
    family: str  # the public module: tileops.<family>
    cls: str  # the op class in it
    tensors: int  # leading positional tensor operands
    # (class keyword, aten argument name, the aten default): a scalar argument
    # that becomes a constructor parameter of the op.
    params: tuple[tuple[str, str, object], ...] = ()
    # aten arguments the class has no parameter for, with the only value it
    # computes (elu's scale); another value runs torch's kernel instead.
    fixed: tuple[tuple[str, object], ...] = ()
    dtypes: tuple[str, ...] = FLOAT


def _unary(cls: str, family: str = "elementwise") -> Entry:
    return Entry(family, cls, 1)


def _binary(cls: str) -> Entry:
    return Entry("elementwise", cls, 2)


OPS: dict[str, Entry] = {
    # torch.<name>
    **{op: _unary(cls) for op, cls in {
        "abs": "AbsFwdOp", "neg": "NegFwdOp", "exp": "ExpFwdOp", "log": "LogFwdOp",
        "sqrt": "SqrtFwdOp", "rsqrt": "RsqrtFwdOp", "reciprocal": "ReciprocalFwdOp",
        "sign": "SignFwdOp", "sin": "SinFwdOp", "cos": "CosFwdOp", "floor": "FloorFwdOp",
        "ceil": "CeilFwdOp", "trunc": "TruncFwdOp", "round": "RoundFwdOp", "erf": "ErfFwdOp",
        "log1p": "Log1pFwdOp", "expm1": "Expm1FwdOp", "sigmoid": "SigmoidFwdOp",
        "tanh": "TanhFwdOp",
    }.items()},
    # torch.nn.functional.<name>
    **{op: _unary(cls) for op, cls in {
        "relu": "ReLUFwdOp", "silu": "SiLUFwdOp", "hardswish": "HardswishFwdOp",
        "hardsigmoid": "HardsigmoidFwdOp", "mish": "MishFwdOp",
    }.items()},
    "gelu": Entry("elementwise", "GELUFwdOp", 1, params=(("approximate", "approximate", "none"),)),
    "leaky_relu": Entry("elementwise", "LeakyReLUFwdOp", 1,
                        params=(("negative_slope", "negative_slope", 0.01),)),
    "elu": Entry("elementwise", "ELUFwdOp", 1, params=(("alpha", "alpha", 1),),
                 fixed=(("scale", 1), ("input_scale", 1))),
    "hardtanh": Entry("elementwise", "HardtanhFwdOp", 1,
                      params=(("min_val", "min_val", -1), ("max_val", "max_val", 1))),
    "softplus": Entry("elementwise", "SoftplusFwdOp", 1,
                      params=(("beta", "beta", 1), ("threshold", "threshold", 20))),
    # torch.add / torch.sub (alpha), torch.mul, ...
    "add.Tensor": Entry("elementwise", "AddFwdOp", 2, params=(("alpha", "alpha", 1),)),
    "sub.Tensor": Entry("elementwise", "SubFwdOp", 2, params=(("alpha", "alpha", 1),)),
    **{op: _binary(cls) for op, cls in {
        "mul.Tensor": "MulFwdOp", "div.Tensor": "DivFwdOp", "maximum": "MaximumFwdOp",
        "minimum": "MinimumFwdOp", "eq.Tensor": "EqFwdOp", "ne.Tensor": "NeFwdOp",
        "gt.Tensor": "GtFwdOp", "lt.Tensor": "LtFwdOp", "ge.Tensor": "GeFwdOp",
        "le.Tensor": "LeFwdOp",
    }.items()},
    # torch.bmm
    "bmm": Entry("gemm", "BMMFwdOp", 2, dtypes=("float16", "bfloat16")),
}

