"""flagos against CPU over PyTorch's OpInfo database (op_db).

Every variant of op_db (op name + variant_test_name) runs in float32, and in
float16 / bfloat16 where the op's CPU dtypes include them; every sample input
of each test (MAX_SAMPLES can cap them per test; uncapped, the file takes 1 to
1.5 minutes on 2 cores) must give the same results on flagos as on CPU:

  test_forward   outputs agree in value, dtype and shape, live on flagos, and
                 a result that aliases an input on CPU aliases the same bytes
                 of the flagos input (views stay views); errors match in type
  test_out       out= into a correctly sized out (written in place: same
                 data_ptr) and into an empty out (resized), where op.supports_out
  test_inplace   the in-place variant returns its input, mutated as on CPU
  test_backward  float32 input gradients, where op.supports_autograd

Samples are built on flagos (so device= arguments and the tensors an op wants
on the CPU, such as tensor_split's indices, are what op_db means) and then
replicated to the CPU storage by storage, keeping bytes, strides, offsets and
aliasing: both sides see identical operands. Random ops are compared by
seeding every generator identically before each side runs: on the host plugin
the flagos generator draws from the CPU's engine, so they match exactly (where
flagos draws from another engine, e.g. CUDA's Philox, samples whose CPU result
depends on the seed are left out). Ops whose output is uninitialised memory
(has_nondeterministic_output) are compared by metadata only.

What does not run, and why, lives in opinfo_skips.py. The route each op takes
is whatever this process was configured with (FLAGOS_BACKEND_CONFIG,
FLAGOS_FORCE_BACKEND, ...), so the same file checks any routing.

TORCH_FL_OPINFO_REFERENCE=cuda compares against native CUDA instead of the
CPU (a CUDA-ABI plugin, where a kernel boxed to CUDA must match CUDA's own
result, draws included, without CUDA-vs-CPU tolerances). Backward is then not
compared: torch 2.11's autograd engine asserts on a native CUDA backward in a
process where flagos is the accelerator (docs/platforms/cuda.md).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import random
from typing import Optional
from unittest import mock

import numpy
import pytest
import torch

import torch_fl  # noqa: F401  (registers flagos before torch.testing's device machinery loads)
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils._pytree import tree_flatten, tree_map

import opinfo_skips

DEVICE = "flagos"
REFERENCE = os.environ.get("TORCH_FL_OPINFO_REFERENCE", "cpu")  # the device flagos is compared with
if REFERENCE not in ("cpu", "cuda") or (REFERENCE == "cuda" and not torch.cuda.is_available()):
    raise RuntimeError(f"[flagos] TORCH_FL_OPINFO_REFERENCE={REFERENCE!r}: use cpu, or cuda where CUDA is "
                       "available")
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
MAX_SAMPLES: Optional[int] = None  # None: all of them
SEED = 20240611

# op_db's samples and kernels warn about deprecated overloads and the like.
pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def variant_name(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _params(test: str, applies) -> list:
    """(op, dtype) cases of `test`, with the skip list's marks."""
    out = []
    for op in op_db:
        supported = op.supported_dtypes(REFERENCE)
        for dtype in DTYPES:
            if dtype not in supported or not applies(op, dtype):
                continue
            name = variant_name(op)
            entry = opinfo_skips.find(name, test, dtype)
            marks = []
            if entry is not None:
                marks.append(pytest.mark.skip(reason=entry.reason) if entry.skip
                             else pytest.mark.xfail(reason=entry.reason, strict=True))
            out.append(pytest.param(op, dtype, id=f"{name}-{str(dtype)[len('torch.'):]}", marks=marks))
    return out


@pytest.fixture(scope="module", autouse=True)
def _module_state():
    """Each side is seeded before it runs; the module leaves every generator
    as it found it. CPU kernels run single-threaded here: thousands of tiny
    calls gain nothing from OpenMP, whose barriers crawl on a loaded 2-core
    machine (both sides use the same setting, so results stay comparable)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        reference_rng = (torch.random.fork_rng(devices=[0], device_type="cuda") if REFERENCE == "cuda"
                         else contextlib.nullcontext())
        with torch.random.fork_rng(devices=range(torch.flagos.device_count()), device_type=DEVICE), reference_rng:
            yield
    finally:
        torch.set_num_threads(threads)


class Replica:
    """REFERENCE copies of flagos sample operands, storage by storage: each
    flagos storage is copied once, and every tensor on it becomes a REFERENCE
    tensor with the same dtype, sizes, strides and offset on the copy. flagos
    devices in arguments become REFERENCE; other tensors are shared as they are."""

    def __init__(self):
        self._storages: dict[int, torch.Tensor] = {}  # flagos storage ptr -> REFERENCE bytes
        self._tensors: dict[int, torch.Tensor] = {}   # id(flagos tensor) -> REFERENCE tensor
        self.flagos_storage_of: dict[int, int] = {}   # REFERENCE storage ptr -> flagos storage ptr

    def of(self, tree):
        return tree_map(self._one, tree)

    def _one(self, x):
        if isinstance(x, torch.device) and x.type == DEVICE:
            return torch.device(REFERENCE)
        if isinstance(x, str) and x.split(":")[0] == DEVICE:
            return REFERENCE
        if not isinstance(x, torch.Tensor) or x.device.type != DEVICE:
            return x
        if id(x) not in self._tensors:
            storage = x.untyped_storage()
            key = storage.data_ptr()
            if key not in self._storages:
                raw = torch.empty(0, dtype=torch.uint8, device=DEVICE).set_(storage)
                self._storages[key] = raw.to(REFERENCE)
                self.flagos_storage_of[self._storages[key].data_ptr()] = key
            cpu = torch.empty(0, dtype=x.dtype, device=REFERENCE).set_(
                self._storages[key].untyped_storage(), x.storage_offset(), x.size(), x.stride())
            self._tensors[id(x)] = cpu.requires_grad_(x.requires_grad)
        return self._tensors[id(x)]


def _seed():
    """The same state for the CPU generator and every flagos one (cheaper than
    torch.manual_seed, which also queues seeds for absent CUDA/XPU/MTIA)."""
    torch.random.default_generator.manual_seed(SEED)
    torch.flagos.manual_seed_all(SEED)
    if REFERENCE == "cuda":
        torch.cuda.manual_seed_all(SEED)


def _samples(op, dtype, requires_grad=False):
    # sample_inputs_func rather than op.sample_inputs: the latter's tracking
    # iterator walks the whole Python stack (inspect.stack) and reseeds every
    # generator per sample, which dominates the run time under pytest. Some
    # sample functions draw from Python's and NumPy's generators too.
    _seed()
    random.seed(SEED)
    numpy.random.seed(SEED)
    samples = op.sample_inputs_func(op, DEVICE, dtype, requires_grad)
    return list(itertools.islice(samples, MAX_SAMPLES))


def _run(fn, *args, **kwargs):
    """fn's result (or the exception it raised), from identically seeded generators."""
    _seed()
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 (compared against CPU's own outcome)
        return None, e


@functools.cache
def _same_engine() -> bool:
    """Whether flagos draws from REFERENCE's random engine (against the CPU:
    the host plugin's generator does, a CUDA-ABI plugin's wraps CUDA's Philox)."""
    _seed()
    drawn = torch.rand(16, device=DEVICE).cpu()
    _seed()
    return torch.equal(drawn, torch.rand(16, device=REFERENCE).cpu())


def _reseed(seed: int) -> None:
    """The reference side's generator (op_db's random ops call torch.manual_seed)."""
    torch.random.default_generator.manual_seed(seed)
    if REFERENCE == "cuda":
        torch.cuda.manual_seed_all(seed)


# The ops whose output is uninitialised memory, for a torch whose OpInfo has
# no has_nondeterministic_output flag yet (torch 2.11 has none).
_UNINITIALISED_OUTPUT = frozenset({"empty", "empty_like", "empty_permuted", "empty_strided",
                                   "new_empty", "new_empty_strided"})


def _uninitialised_output(op) -> bool:
    flag = getattr(op, "has_nondeterministic_output", None)
    return op.name in _UNINITIALISED_OUTPUT if flag is None else flag


def _random_elsewhere(op, sample) -> bool:
    """True for a sample that draws random numbers where flagos draws from
    another engine than the CPU: it cannot match. A random sample's CPU result
    changes with the seed; op_db's random ops reseed themselves
    (wrapper_set_seed calls torch.manual_seed(42)), so that call is redirected."""
    if _same_engine() or _uninitialised_output(op):
        return False
    results = []
    for seed in (SEED, SEED + 1):
        cpu = Replica().of((sample.input, sample.args, sample.kwargs))
        reseed = lambda _, s=seed: _reseed(s)  # noqa: E731
        with mock.patch.object(torch, "manual_seed", reseed):
            reseed(None)
            try:
                results.append(_tensors(op(cpu[0], *cpu[1], **cpu[2])))
            except Exception:  # noqa: BLE001 (a raising sample is compared as such)
                return False
    return any(not _equal(a, b) for a, b in zip(*results))


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """torch.equal, also for ComplexHalf (which the CPU's equal lacks)."""
    if a.dtype == torch.complex32 and b.dtype == torch.complex32:
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    return torch.equal(a, b)


def _tensors(tree) -> list[torch.Tensor]:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _to_cpu(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x


def _reference_lacks_kernel(err) -> bool:
    """CUDA has no kernel for the op (narrow_copy.out): flagos serving it
    anyway (through another route) is not a difference to report."""
    return (REFERENCE == "cuda" and isinstance(err, NotImplementedError)
            and "from the 'CUDA' backend" in str(err))


def _assert_same_outcome(err_flagos, err_cpu) -> bool:
    """True when both sides raised (matching types), or the reference has no
    kernel at all: nothing left to compare."""
    if err_cpu is not None and err_flagos is None and _reference_lacks_kernel(err_cpu):
        return True
    if err_cpu is not None:
        assert err_flagos is not None, f"{REFERENCE} raised {type(err_cpu).__name__}: {err_cpu}; flagos did not"
        assert isinstance(err_flagos, type(err_cpu)), (
            f"{REFERENCE} raised {type(err_cpu).__name__}, flagos {type(err_flagos).__name__}: {err_flagos}")
        return True
    if err_flagos is not None:
        raise err_flagos
    return False


def _results_on_flagos(sample) -> bool:
    """Whether the op should answer on flagos: it has a flagos operand or
    device argument, and no other device argument (new_zeros(..., device="cpu"),
    zeros_like(x, device="cuda") where CUDA is available; torch.arange(2)
    with no device at all is a CPU tensor too)."""
    def device_type(x):
        if isinstance(x, torch.Tensor):
            return x.device.type
        if isinstance(x, torch.device):
            return x.type
        if isinstance(x, str):
            try:
                return torch.device(x).type
            except RuntimeError:  # a string argument that is not a device ("mean")
                return None
        return None
    named = {device_type(x) for x in tree_flatten((sample.input, sample.args, sample.kwargs))[0]}
    explicit = {device_type(x) for x in tree_flatten((sample.args, sample.kwargs))[0]
                if not isinstance(x, torch.Tensor)}
    return DEVICE in named and not explicit - {DEVICE, None}


def _assert_matches(op, actual, expected, on_flagos=True):
    """flagos `actual` against the reference's `expected` (trees of the same
    shape). A result the reference device itself leaves on the CPU (CUDA's
    attention kernels return their Philox seed and offset there) stays there."""
    for a, e in zip(_tensors(actual), _tensors(expected)) if on_flagos else ():
        want = "cpu" if e.device.type == "cpu" and REFERENCE != "cpu" else DEVICE
        assert a.device.type == want, f"a result is on {a.device}, not {want}"
    actual = tree_map(_to_cpu, actual)
    expected = tree_map(_to_cpu, expected)
    state = opinfo_skips.GENERATOR_STATE.get(variant_name(op), ()) if REFERENCE != "cpu" else ()
    if state and isinstance(actual, tuple):  # the generators' positions: metadata only
        meta = lambda t: (t.shape, t.dtype) if isinstance(t, torch.Tensor) else t  # noqa: E731
        assert [meta(actual[i]) for i in state] == [meta(expected[i]) for i in state]
        actual = tuple(x for i, x in enumerate(actual) if i not in state)
        expected = tuple(x for i, x in enumerate(expected) if i not in state)
    if _uninitialised_output(op):  # compare metadata only
        meta = lambda t: (t.shape, t.dtype) if isinstance(t, torch.Tensor) else t  # noqa: E731
        assert tree_map(meta, actual) == tree_map(meta, expected)
        return
    torch.testing.assert_close(actual, expected, equal_nan=True,
                               **opinfo_skips.tolerance(variant_name(op), expected))


def _assert_views_kept(actual, expected, replica: Replica):
    """A CPU result aliasing a (replicated) input must alias the same bytes
    of the matching flagos input."""
    for a, e in zip(_tensors(actual), _tensors(expected)):
        storage = e.untyped_storage()
        if storage.nbytes() == 0 or storage.data_ptr() not in replica.flagos_storage_of:
            continue
        assert a.untyped_storage().data_ptr() == replica.flagos_storage_of[storage.data_ptr()], (
            "CPU returns a view of an input; flagos returns a copy")
        assert (a.storage_offset(), a.stride()) == (e.storage_offset(), e.stride())


@pytest.mark.parametrize("op,dtype", _params("forward", lambda op, dtype: True))
def test_forward(op, dtype):
    compared = 0
    for sample in _samples(op, dtype):
        if _random_elsewhere(op, sample):
            continue
        replica = Replica()
        cpu = replica.of((sample.input, sample.args, sample.kwargs))
        expected, err_cpu = _run(op, cpu[0], *cpu[1], **cpu[2])
        actual, err = _run(op, sample.input, *sample.args, **sample.kwargs)
        if _assert_same_outcome(err, err_cpu):
            continue
        _assert_views_kept(actual, expected, replica)
        _assert_matches(op, sample.output_process_fn_grad(actual), sample.output_process_fn_grad(expected),
                        on_flagos=_results_on_flagos(sample))
        compared += 1
    if compared == 0:
        pytest.skip("every sample raises on CPU as on flagos (or draws from a random engine CPU lacks)")


def _empty_outs(like, make):
    if isinstance(like, torch.Tensor):
        return make(like)
    if isinstance(like, (tuple, list)) and like and all(isinstance(t, torch.Tensor) for t in like):
        return tuple(make(t) for t in like)
    return None


@pytest.mark.parametrize("op,dtype", _params("out", lambda op, dtype: op.supports_out))
def test_out(op, dtype):
    compared = 0
    for sample in _samples(op, dtype):
        cpu = Replica().of((sample.input, sample.args, sample.kwargs))
        reference, err = _run(op, cpu[0], *cpu[1], **cpu[2])
        if err is not None or _empty_outs(reference, lambda t: t) is None or _random_elsewhere(op, sample):
            continue  # no out= form for this sample, or no matching draws
        # Zero-filled, not empty: a few CPU out= kernels leave elements of an
        # oddly strided out unwritten, which must then read the same on both sides.
        sized = {
            REFERENCE: lambda t: torch.zeros_like(t, memory_format=torch.preserve_format),
            DEVICE: lambda t: torch.zeros_like(t, memory_format=torch.preserve_format, device=DEVICE),
        }
        empty = {
            REFERENCE: lambda t: torch.empty(0, dtype=t.dtype, device=t.device),
            DEVICE: lambda t: torch.empty(0, dtype=t.dtype, device=DEVICE),
        }
        for make in (sized, empty):
            out_cpu = _empty_outs(reference, make[REFERENCE])
            out = _empty_outs(reference, make[DEVICE])
            ptrs = [t.data_ptr() for t in _tensors(out)]
            expected, err_cpu = _run(op, cpu[0], *cpu[1], **cpu[2], out=out_cpu)
            actual, err = _run(op, sample.input, *sample.args, **sample.kwargs, out=out)
            if _assert_same_outcome(err, err_cpu):
                continue
            assert all(a is b for a, b in zip(_tensors(actual), _tensors(out))), "out= returned another tensor"
            _assert_matches(op, out, out_cpu, on_flagos=False)  # made on flagos above, and returned as is
            if make is sized:
                assert [t.data_ptr() for t in _tensors(out)] == ptrs, "a correctly sized out was reallocated"
            compared += 1
    if compared == 0:
        pytest.skip("no sample has an out= form (or each draws from a random engine CPU lacks)")


@pytest.mark.parametrize("op,dtype", _params("inplace", lambda op, dtype: op.inplace_variant is not None))
def test_inplace(op, dtype):
    inplace = op.inplace_variant
    compared = 0
    for sample in _samples(op, dtype):
        if sample.broadcasts_input or _random_elsewhere(op, sample):
            continue  # in-place cannot resize its input (op_db marks these); no matching draws
        cpu = Replica().of((sample.input, sample.args, sample.kwargs))
        expected, err_cpu = _run(inplace, cpu[0], *cpu[1], **cpu[2])
        actual, err = _run(inplace, sample.input, *sample.args, **sample.kwargs)
        if _assert_same_outcome(err, err_cpu):
            continue
        assert actual is sample.input, "the in-place variant returned another tensor"
        geometry = lambda t: (t.shape, t.stride(), t.storage_offset())  # noqa: E731
        assert geometry(actual) == geometry(cpu[0]), "in-place result's sizes, strides or offset differ"
        _assert_matches(op, sample.input, cpu[0])
        compared += 1
    if compared == 0:
        pytest.skip("no sample can be updated in place and compared (each broadcasts its input, "
                    "raises on CPU too or draws from a random engine CPU lacks)")


def _differentiable(tree) -> list[torch.Tensor]:
    return [t for t in _tensors(tree) if t.requires_grad and (t.is_floating_point() or t.is_complex())]


def _grads(outputs, inputs, cotangents):
    return torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True)


@pytest.mark.parametrize("op,dtype", _params("backward", lambda op, dtype: op.supports_autograd
                                             and dtype == torch.float32))
def test_backward(op, dtype):
    if REFERENCE != "cpu":
        pytest.skip("backward is compared against the CPU only (torch 2.11 asserts on a native CUDA "
                    "backward beside flagos)")
    compared = 0
    for sample in _samples(op, dtype, requires_grad=True):
        if _random_elsewhere(op, sample):
            continue
        replica = Replica()
        operands = (sample.input, sample.args, sample.kwargs)
        cpu = replica.of(operands)
        inputs, cpu_inputs = _differentiable(operands), _differentiable(cpu)
        expected, err_cpu = _run(op, cpu[0], *cpu[1], **cpu[2])
        actual, err = _run(op, sample.input, *sample.args, **sample.kwargs)
        if _assert_same_outcome(err, err_cpu):
            continue
        outputs = _differentiable(sample.output_process_fn_grad(actual))
        cpu_outputs = _differentiable(sample.output_process_fn_grad(expected))
        if not inputs or not cpu_outputs:
            continue
        assert len(outputs) == len(cpu_outputs), "flagos results lost requires_grad"
        g = torch.Generator().manual_seed(SEED)
        cotangents = [torch.randn(t.shape, dtype=t.dtype, generator=g) for t in cpu_outputs]
        expected_grads, err_cpu = _run(_grads, cpu_outputs, cpu_inputs, cotangents)
        grads, err = _run(_grads, outputs, inputs, [c.to(DEVICE) for c in cotangents])
        if _assert_same_outcome(err, err_cpu):
            continue
        _assert_matches(op, list(grads), list(expected_grads))
        compared += 1
    if compared == 0:
        pytest.skip("no sample has a differentiable result (or each draws from a random engine CPU lacks)")
