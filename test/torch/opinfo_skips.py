"""The OpInfo variants test_opinfo.py does not expect to pass, each with its reason.

Keys are OpInfo variant names ("name" or "name.variant_test_name"). An entry
applies to the tests it names (forward, out, inplace, backward), to its dtypes
(None: all) and, when it has a `when` condition, only where that holds (for
example, only where an ATen op is routed to cpu_fallback). `skip=True` is for
cases that cannot run at all (not meaningful on flagos, or would kill the
process); every other entry is a strict xfail, so a fix shows up as an
unexpected pass and the entry must go.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Callable, Optional

import torch
from torch.utils._pytree import tree_flatten

TESTS = ("forward", "out", "inplace", "backward")


@dataclass(frozen=True)
class Entry:
    reason: str
    tests: tuple[str, ...] = TESTS
    dtypes: Optional[tuple[torch.dtype, ...]] = None
    skip: bool = False
    when: Optional[Callable[[], bool]] = None


def _skip(reason: str, tests=TESTS, dtypes=None) -> Entry:
    return Entry(reason, tests, dtypes, skip=True)


@functools.cache
def _routes() -> dict[str, str]:
    import torch_fl
    return {r["op"]: r["route"] for r in torch_fl.routes()}


def _listed_as(route: str, *aten_ops: str) -> Callable[[], bool]:
    """Where the routing in use lists one of `aten_ops` with `route`."""
    return lambda: any(_routes().get(op) == route for op in aten_ops)


def _unlisted(*aten_ops: str) -> Callable[[], bool]:
    """Where the routing lists none of `aten_ops`: their CompositeExplicitAutograd
    decomposition then runs on flagos (it outranks the global cpu_fallback)."""
    return lambda: not any(op in _routes() for op in aten_ops)


_SPARSE = "sparse layouts are not supported on flagos (strided tensors only)"


@functools.cache
def _sdpa_mask_grad_fails() -> bool:
    q = k = v = torch.ones(1, 1, 3, 8, device="flagos")
    mask = torch.zeros(3, 3, device="flagos", requires_grad=True)
    try:
        torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    except RuntimeError:
        return True
    return False


def _torch_before(major: int, minor: int) -> bool:
    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (major, minor)


def _decomposed(aten_op: str, why: str, tests=TESTS, dtypes=None, before=None) -> Entry:
    """`before` (major, minor): only under an older torch, whose decomposition differs."""
    unlisted = _unlisted(aten_op)
    return Entry(f"{aten_op} unrouted runs its CompositeExplicitAutograd decomposition, not CPU's kernel: {why}",
                 tests, dtypes, when=unlisted if before is None else lambda: unlisted() and _torch_before(*before))


_HALF = (torch.float16, torch.bfloat16)
_ZERO_VARIANCE = ("its samples include one-element normalised shapes, whose zero variance scales the "
                  "rounding of x - mean by 1/sqrt(eps)")
_JITERATOR = "jiterator compiles CUDA source at run time: CUDA and ROCm only"


def _against_cuda() -> bool:
    return os.environ.get("TORCH_FL_OPINFO_REFERENCE", "cpu") == "cuda"


# torch's FFT front ends (promote_type_fft) accept half inputs for device type
# cuda only: flagos refuses, in torch's words, what native CUDA runs.
_FFT_HALF = Entry("torch's FFT front ends accept float16 for device type cuda only (promote_type_fft): "
                  "flagos raises 'Unsupported dtype Half' where native CUDA runs cuFFT",
                  tests=("forward", "out"), dtypes=(torch.float16,), when=_against_cuda)
_FFTS = [f"fft.{kind}{dims}" for kind in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft") for dims in ("", "2", "n")]


def _acc_dtype(dtypes) -> Entry:
    return Entry("torch picks the accumulation dtype by device type: float32 for half inputs on cpu "
                 "(and cuda), the input dtype elsewhere (linear_cross_entropy_options._resolve_auto_acc_dtype)",
                 tests=("forward",), dtypes=dtypes)


ENTRIES: dict[str, list[Entry]] = {
    "jiterator_unary": [_skip(_JITERATOR)],
    "jiterator_binary": [_skip(_JITERATOR)],
    "jiterator_binary_return_by_ref": [_skip(_JITERATOR)],
    "jiterator_2inputs_2outputs": [_skip(_JITERATOR)],
    "jiterator_4inputs_with_extra_args": [_skip(_JITERATOR)],
    "sparse.sampled_addmm": [_skip(_SPARSE)],
    "sparse.mm.reduce": [_skip(_SPARSE)],
    "to_sparse": [_skip(_SPARSE)],
    "nn.functional.linear_cross_entropy.chunked": [_acc_dtype((torch.float16,))],
    "nn.functional.linear_cross_entropy.chunked_none": [_acc_dtype(_HALF)],
    "nn.functional.scaled_dot_product_attention": [Entry(
        "flagos' _fused_sdp_choice stub (core/aten/sdpa.cpp) asks CPU's choice on boxed views without "
        "requires_grad, so it "
        "picks flash attention, whose backward rejects the grad-requiring attn_mask CPU steers to math",
        tests=("backward",), when=_sdpa_mask_grad_fails)],
    "as_strided.partial_views": [Entry(
        "as_strided_ with an absolute storage_offset outside the bytes the operand spans: "
        "cpu_fallback's host mirror covers only those bytes, so the offset lands elsewhere "
        "(a metadata-only op, which no route should send to cpu_fallback)",
        tests=("inplace",), when=_listed_as("cpu_fallback", "as_strided_"))],
    "addr": [_decomposed("addr", "half rounding of the outer product differs", dtypes=_HALF)],
    "native_group_norm": [_decomposed("native_group_norm", "half rounding differs", dtypes=_HALF)],
    "nn.functional.group_norm": [
        _decomposed("native_group_norm", "half rounding differs", dtypes=_HALF),
        _decomposed("native_group_norm", "torch 2.11's raises on an empty input, CPU's kernel returns",
                    tests=("forward", "backward"), dtypes=(torch.float32,), before=(2, 12))],
    "nn.functional.layer_norm": [
        _decomposed("native_layer_norm", _ZERO_VARIANCE, dtypes=(torch.float32,)),
        _decomposed("native_layer_norm", "torch 2.11's rounds half inputs a few ulps apart",
                    tests=("forward",), dtypes=_HALF, before=(2, 12))],
    "native_layer_norm": [_decomposed("native_layer_norm", _ZERO_VARIANCE, tests=("forward", "backward"))],
    # CUDA's mode kernel returns any index of a tied mode value, not the same
    # one from call to call, so indices cannot be compared against CUDA.
    "mode": [Entry("CUDA's mode kernel picks any index of a tied value, differently between calls",
                   tests=("forward", "out"), skip=True, when=_against_cuda)],
    **{name: [_FFT_HALF] for name in _FFTS},
}

# Outputs that are a random generator's position, not a computed value (the
# seed and offset CUDA's attention kernels report, drawn or not): flagos'
# generator and CUDA's have different histories in one process, so against
# CUDA only their shape and dtype are compared. Indices into the result tuple.
GENERATOR_STATE: dict[str, tuple[int, ...]] = {
    "torch.ops.aten._flash_attention_forward": (2, 3),
    "torch.ops.aten._efficient_attention_forward": (2, 3),
}


def find(variant: str, test: str, dtype: torch.dtype) -> Optional[Entry]:
    for entry in ENTRIES.get(variant, ()):
        if (test in entry.tests and (entry.dtypes is None or dtype in entry.dtypes)
                and (entry.when is None or entry.when())):
            return entry
    return None


# float32 results may differ by a few ulps once a route runs a kernel with
# another summation order than CPU's (the host plugin's native mm), and
# ill-conditioned linear algebra backward amplifies that (pinv.hermitian,
# householder_product): torch's own 1.3e-6 relative is too tight for those.
_DEFAULT = {torch.float32: (1e-5, 1e-5)}

# Variants needing more: variant -> {dtype: (atol, rtol)}, reason beside each.
TOLERANCES: dict[str, dict[torch.dtype, tuple[float, float]]] = {
    # Its backward chains several matmuls of an ill-conditioned reflector
    # product: 2e-5 relative once mm runs the host plugin's native kernel.
    "linalg.householder_product": {torch.float32: (1e-4, 1e-4)},
    # Without a PrivateUse1 stub for its backend choice (strict host plugin),
    # sdpa computes the math path on flagos where CPU runs its flash kernel.
    "nn.functional.scaled_dot_product_attention": {
        torch.float32: (1e-4, 1e-4), torch.float16: (1e-3, 1e-2), torch.bfloat16: (1e-2, 1.6e-2)},
}


def tolerance(variant: str, expected) -> dict:
    """assert_close tolerances for `variant` (empty: torch's dtype defaults)."""
    per_dtype = {**_DEFAULT, **TOLERANCES.get(variant, {})}
    for leaf in tree_flatten(expected)[0]:
        if isinstance(leaf, torch.Tensor) and leaf.dtype in per_dtype:
            atol, rtol = per_dtype[leaf.dtype]
            return {"atol": atol, "rtol": rtol}
    return {}
