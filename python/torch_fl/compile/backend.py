"""The "flagos" Dynamo backend, and the flagos side of the default one.

``torch.compile(model, backend="flagos")`` and a plain ``torch.compile(model)``
on flagos tensors both reach Inductor's ``compile_fx``; for a flagos graph it
is given the codegen path the plugin supports (torch_fl.compile._capability):
triton needs nothing more, cpp takes the host path's inner compile, and a
plugin with neither runs the graph eagerly, said once.
FLAGOS_COMPILE_FALLBACK_EAGER=1 runs a graph Inductor cannot compile eagerly,
with one warning naming the operator; otherwise the error surfaces.
"""

from __future__ import annotations

import re
import threading
import warnings
from typing import Any, Callable, Sequence

import torch

from torch_fl import _env
from torch_fl.compile import _capability, _environment

_said: set[str] = set()
_said_lock = threading.Lock()


def _say_once(key: str, message: str) -> None:
    with _said_lock:
        if key in _said:
            return
        _said.add(key)
    warnings.warn(message, stacklevel=3)


def _flagos_device(example_inputs: Sequence[Any], gm: torch.fx.GraphModule | None) -> int | None:
    """The flagos device a graph works on, or None for a graph without one."""
    for x in example_inputs:
        if isinstance(x, torch.Tensor) and x.device.type == "flagos":
            return x.device.index or 0
    if gm is not None:
        # A graph whose inputs are all CPU can still move them to flagos
        # (x.to("flagos") inside the compiled function): its nodes' fake
        # values say so, under "val" after AOTAutograd, "example_value" in
        # Dynamo's graph.
        for node in gm.graph.nodes:
            val = node.meta.get("val", node.meta.get("example_value"))
            if isinstance(val, torch.Tensor) and val.device.type == "flagos":
                return val.device.index or 0
    return None


def _failed_operator(error: BaseException) -> str:
    """The operator an Inductor error is about, as its message names it."""
    seen = error
    while seen is not None:
        found = re.search(r"target[:=]\s*([\w.:]+)", str(seen))
        if found:
            return found.group(1)
        seen = seen.__cause__ or seen.__context__
    return type(error).__name__


def _eager(gm: torch.fx.GraphModule) -> Callable:
    return gm.forward


def compile_graph(compile_fx: Callable, gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                  kwargs: dict) -> Callable:
    """``compile_fx(gm, example_inputs, **kwargs)`` for a graph on flagos device tensors."""
    device = _flagos_device(example_inputs, gm)
    kind = _capability.codegen(device)
    problem = _environment.flagtree_problem()
    if problem:
        raise RuntimeError(f"[flagos] torch.compile: {problem}")
    if kind is None:
        _say_once("no-codegen", f"[flagos] torch.compile: {_capability.describe(device)}; "
                                "compiled functions run eagerly")
        return _eager(gm)
    if kind == "triton":
        from torch_fl.compile import triton_codegen
        triton_codegen.register()
    if kind == "cpp" and kwargs.get("inner_compile") is None:
        from torch_fl.compile import host
        kwargs["inner_compile"] = host.inner_compile
    if not _env.get("FLAGOS_COMPILE_FALLBACK_EAGER"):
        return compile_fx(gm, example_inputs, **kwargs)
    # compile_fx may rewrite the graph in place; the eager fallback keeps a copy.
    eager = torch.fx.GraphModule(gm, gm.graph.__deepcopy__())
    try:
        return compile_fx(gm, example_inputs, **kwargs)
    except Exception as error:  # noqa: BLE001 - the switch asks for any codegen failure
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        warnings.warn(f"[flagos] torch.compile: {_failed_operator(error)} did not compile ({first}); "
                      "this graph runs eagerly (FLAGOS_COMPILE_FALLBACK_EAGER=1)", stacklevel=2)
        return _eager(eager)


def flagos(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *, mode: str | None = None,
           options: dict | None = None) -> Callable:
    """``torch.compile(backend="flagos")``: Inductor, with ``mode`` and ``options`` as
    ``backend="inductor"`` takes them (compile_fx is wrapped by then: see install)."""
    from torch._inductor import compile_fx as module, list_mode_options

    patches = dict(list_mode_options(mode)) if mode else {}
    patches.update(options or {})
    return module.compile_fx(gm, example_inputs, **({"config_patches": patches} if patches else {}))


def wrap_compile_fx(module) -> None:
    """Points torch._inductor.compile_fx.compile_fx (what backend="inductor" and a
    bare torch.compile call) through compile_graph for flagos graphs."""
    original = module.compile_fx
    if getattr(original, "_flagos", False):
        return

    def compile_fx(model_, example_inputs_, inner_compile=None, **kwargs):
        if inner_compile is not None:  # a nested call that already chose
            return original(model_, example_inputs_, inner_compile=inner_compile, **kwargs)
        if isinstance(model_, torch.fx.GraphModule) and _flagos_device(example_inputs_, model_) is not None:
            return compile_graph(original, model_, example_inputs_, kwargs)
        return original(model_, example_inputs_, **kwargs)

    compile_fx._flagos = True
    compile_fx.__doc__ = original.__doc__
    module.compile_fx = compile_fx
