"""Graph capture on flagos, shaped like ``torch.cuda.graphs`` (docs/graphs.md).

``FlagosGraph`` captures the work enqueued on a side stream and replays it;
``graph`` is the capture context manager; ``make_graphed_callables`` turns
modules or functions into ones whose forward and backward are replays. The
capture runs on the plugin's graphs extension (``flagos/ext/graphs.h``) and
the core's caching allocator serves it from a private memory pool.
"""

from __future__ import annotations

import gc
from typing import Any, Callable, Optional

import torch
import torch.utils._pytree as pytree

from torch_fl import _C

_PoolHandle = tuple  # (int, int), as torch.cuda's


def graph_pool_handle() -> _PoolHandle:
    """A pool id to share one private memory pool between captures (``pool=``)."""
    return _C._graph_pool_handle()


def is_current_stream_capturing() -> bool:
    """True while the current flagos stream is being captured."""
    from . import _lazy_init

    _lazy_init()
    return _C._is_current_stream_capturing()


class _TorchCudaPool:
    """On CUDA-ABI plugins kernels boxed to CUDA allocate from torch's CUDA
    caching allocator: while a flagos graph captures, it serves them from a
    private pool of the same id, as it would for a CUDA graph."""

    def __init__(self) -> None:
        self.device: Optional[int] = None

    def begin(self, pool: _PoolHandle) -> None:
        found = _C._graph_current_cuda_stream()
        if found is None:
            return
        self.device, handle = found
        begin = getattr(torch._C, "_cuda_beginAllocateCurrentStreamToPool", None)
        begin = begin or torch._C._cuda_beginAllocateToPool
        from torch_fl.compat.cuda_shim import native  # the real CUDA stream, shim or not

        with native("stream")(torch.cuda.ExternalStream(handle, device=self.device)):
            begin(self.device, pool)

    def end(self, pool: _PoolHandle) -> None:
        if self.device is not None:
            end = getattr(torch._C, "_cuda_endAllocateCurrentStreamToPool", None)
            (end or torch._C._cuda_endAllocateToPool)(self.device, pool)

    def release(self, pool: _PoolHandle) -> None:
        if self.device is not None:
            torch._C._cuda_releasePool(self.device, pool)
            self.device = None


class FlagosGraph:
    """A captured graph of flagos work, like ``torch.cuda.CUDAGraph``.

    ``capture_begin``/``capture_end`` capture the current stream (a side
    stream, never the default one); ``replay`` launches the captured work on
    the current stream; ``reset`` drops it and its use of the memory pool.
    """

    def __init__(self) -> None:
        from . import _lazy_init

        _lazy_init()
        _C._graphs_check()
        self._graph = _C._FlagosGraph()
        self._cuda_pool = _TorchCudaPool()
        self._captured = False

    def capture_begin(self, pool: Optional[_PoolHandle] = None) -> None:
        if self._captured:
            raise RuntimeError("[flagos] capture_begin: this graph holds a capture; reset() it first")
        self._cuda_pool.release(self._graph.pool())  # a failed capture still held its pool
        self._graph.capture_begin(tuple(pool) if pool is not None else (0, 0))
        try:
            self._cuda_pool.begin(self._graph.pool())
        except BaseException:
            self._abandon_capture()
            raise

    def capture_end(self) -> None:
        try:
            self._graph.capture_end()
            self._captured = True
        finally:
            self._cuda_pool.end(self._graph.pool())

    def replay(self) -> None:
        self._graph.replay()

    def reset(self) -> None:
        self._graph.reset()
        self._cuda_pool.release(self._graph.pool())
        self._captured = False

    def pool(self) -> _PoolHandle:
        """This graph's memory pool id, for ``pool=`` of a later capture."""
        return self._graph.pool()

    def _abandon_capture(self) -> None:
        """Ends a capture whose body failed: the stream leaves capture mode,
        and the failure being raised stays the one the caller sees."""
        try:
            self.capture_end()
        except RuntimeError:
            pass

    def __del__(self) -> None:
        try:
            self.reset()
        except Exception:  # at interpreter exit the plugin may already be gone
            pass


class graph:
    """Captures the flagos work of its body into ``flagos_graph``, like
    ``torch.cuda.graph``: synchronizes and collects garbage first, then
    captures on ``stream`` or on a side stream shared by all captures.

    Unlike ``torch.cuda.graph`` it does not empty the memory cache first: on
    CUDA-ABI plugins that is torch's CUDA caching allocator, and emptying it
    between a native CUDA graph's capture and its replays makes those replays
    fault with an illegal memory access."""

    default_capture_stream: Optional[torch.Stream] = None

    def __init__(self, flagos_graph: FlagosGraph, pool: Optional[_PoolHandle] = None,
                 stream: Optional[torch.Stream] = None) -> None:
        from . import Stream

        if stream is None and graph.default_capture_stream is None:
            graph.default_capture_stream = Stream()
        self.flagos_graph = flagos_graph
        self.pool = pool
        self.capture_stream = stream if stream is not None else graph.default_capture_stream

    def __enter__(self) -> None:
        from . import stream, synchronize

        synchronize()
        gc.collect()
        self.stream_ctx = stream(self.capture_stream)
        self.stream_ctx.__enter__()
        try:
            self.flagos_graph.capture_begin(self.pool)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                self.flagos_graph.capture_end()
            else:
                self.flagos_graph._abandon_capture()
        finally:
            self.stream_ctx.__exit__(exc_type, exc, tb)
        return False


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: Optional[_PoolHandle] = None):
    """Graphed versions of ``callables`` (modules or functions), as
    ``torch.cuda.make_graphed_callables``: each callable's forward and
    backward are captured once, with ``sample_args``, into graphs sharing one
    memory pool; calling the result copies the inputs into the captured
    (static) ones and replays. A module keeps its eager forward while its
    ``training`` differs from its state at capture."""
    if torch.is_autocast_enabled() and torch.is_autocast_cache_enabled():
        raise RuntimeError("[flagos] make_graphed_callables does not support the autocast cache: "
                           "use autocast(..., cache_enabled=False)")
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (sample_args,)
    flat_args = [tuple(pytree.arg_tree_leaves(*args)) for args in sample_args]
    for func, args in zip(callables, flat_args):
        _check_graphable(func, args)
    params = [tuple(f.parameters()) if isinstance(f, torch.nn.Module) else () for f in callables]
    surfaces = [args + p for args, p in zip(flat_args, params)]
    mempool = graph_pool_handle() if pool is None else pool

    _warm_up(callables, sample_args, surfaces, num_warmup_iters, allow_unused_input)
    fwd_graphs = [FlagosGraph() for _ in callables]
    bwd_graphs = [FlagosGraph() for _ in callables]
    outputs, specs = [], []
    for func, args, fwd in zip(callables, sample_args, fwd_graphs):
        with graph(fwd, pool=mempool):
            result = func(*args)
        flat, spec = pytree.tree_flatten(result)
        outputs.append(tuple(flat))
        specs.append(spec)
    # Backward graphs in reverse order, so that memory of the later ones'
    # backward can be reused by the earlier ones', as in eager execution.
    grad_outputs, grad_inputs = [None] * len(callables), [None] * len(callables)
    for i in reversed(range(len(callables))):
        grad_outputs[i] = tuple(torch.empty_like(o) if o.requires_grad else None for o in outputs[i])
        wanted = tuple(o for o in outputs[i] if o.requires_grad)
        grads = None
        if wanted:
            with graph(bwd_graphs[i], pool=mempool):
                grads = torch.autograd.grad(
                    outputs=wanted, inputs=tuple(x for x in surfaces[i] if x.requires_grad),
                    grad_outputs=tuple(g for g in grad_outputs[i] if g is not None),
                    only_inputs=True, allow_unused=allow_unused_input)
        grads_iter = iter(grads or ())
        grad_inputs[i] = tuple(next(grads_iter) if x.requires_grad and grads is not None else None
                               for x in surfaces[i])

    graphed = []
    for i, func in enumerate(callables):
        fn = _graphed_function(fwd_graphs[i], bwd_graphs[i], params[i], len(flat_args[i]), specs[i],
                               surfaces[i], outputs[i], grad_outputs[i], grad_inputs[i])
        if isinstance(func, torch.nn.Module):
            func.forward = _switching_forward(func, func.training, fn, func.forward)
            graphed.append(func)
        else:
            graphed.append(fn)
    return graphed[0] if single else tuple(graphed)


def _check_graphable(func: Any, args: tuple) -> None:
    if isinstance(func, torch.nn.Module):
        if func._backward_hooks or func._forward_hooks or func._forward_pre_hooks:
            raise RuntimeError("[flagos] make_graphed_callables: modules must have no hooks when "
                               "passed (hooks registered afterwards are allowed)")
        if any(b.requires_grad for b in func.buffers()):
            raise RuntimeError("[flagos] make_graphed_callables: only parameters may require grad; "
                               "a buffer does")
    if not all(isinstance(a, torch.Tensor) for a in args):
        raise RuntimeError("[flagos] make_graphed_callables: sample_args must hold only tensors")


def _warm_up(callables, sample_args, surfaces, iters: int, allow_unused: bool) -> None:
    """Runs each callable eagerly on a side stream first: lazy initialisation
    (workspaces, caches) must not happen inside a capture."""
    from . import Stream, stream, synchronize

    synchronize()
    with stream(Stream()):
        for func, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(iters):
                outs = [o for o in pytree.tree_leaves(func(*args)) if o.requires_grad]
                if outs:
                    torch.autograd.grad(outputs=outs, inputs=tuple(x for x in surface if x.requires_grad),
                                        grad_outputs=tuple(torch.empty_like(o) for o in outs),
                                        only_inputs=True, allow_unused=allow_unused)
    synchronize()


def _graphed_function(fwd: FlagosGraph, bwd: FlagosGraph, params: tuple, n_user: int, spec,
                      surface: tuple, static_out: tuple, static_grad_out: tuple,
                      static_grad_in: tuple) -> Callable:
    class Graphed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for static, given in zip(surface[:n_user], inputs[:n_user]):
                if static.data_ptr() != given.data_ptr():
                    static.copy_(given)
            fwd.replay()
            return tuple(o.detach() for o in static_out)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            for static, given in zip(static_grad_out, grads):
                if static is not None and static.data_ptr() != given.data_ptr():
                    static.copy_(given)
            bwd.replay()
            return tuple(g.detach() if g is not None else None for g in static_grad_in)

    def run(*user_args):
        flat = pytree.arg_tree_leaves(*user_args)
        return pytree.tree_unflatten(Graphed.apply(*(tuple(flat) + params)), spec)

    return run


def _switching_forward(module: torch.nn.Module, training: bool, graphed: Callable,
                       eager: Callable) -> Callable:
    def forward(*args, **kwargs):
        return graphed(*args, **kwargs) if module.training == training else eager(*args, **kwargs)

    return forward


__all__ = ["FlagosGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]
