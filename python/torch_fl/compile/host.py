"""The cpp codegen path (host-addressable plugins): Inductor compiles each
graph AOTAutograd hands it as a CPU graph, and the compiled code runs on CPU
views of the flagos operands, zero-copy.

Inductor's CPU backend tests ``device.type == "cpu"`` in well over a hundred
places, so registering its C++ scheduling for another device type would
half-work. Instead the graph is re-targeted before lowering: every flagos
device in it becomes cpu, its fake values are propagated again on the CPU,
and Inductor lowers a plain CPU graph. At run time ``_C._host_call`` (the cpu
boxing route's machinery) presents flagos operands as CPU tensors over the
same bytes after the device's queued work, makes the buffers the code
allocates flagos memory, and hands results back as flagos tensors — views
onto their operand's storage or their own memory re-labelled, never copies.
Where the same graph means something else on the CPU, cpu_semantics.py
rewrites it first.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
from torch.fx import GraphModule
from torch.fx.node import map_aggregate

from torch_fl import _C
from torch_fl.compile import cpu_semantics

_CPU = torch.device("cpu")


def _flagos(obj: Any) -> bool:
    return isinstance(obj, torch.device) and obj.type == "flagos"


def _as_cpu(obj: Any) -> Any:
    if _flagos(obj):
        return _CPU
    if isinstance(obj, str) and obj.split(":")[0] == "flagos":
        return "cpu"
    return obj


def _value_device(node: torch.fx.Node) -> torch.device | None:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val.device if isinstance(val, torch.Tensor) else None


def _seeded(gm: GraphModule) -> bool:
    """Whether the graph draws random numbers (then the flagos generator decides them)."""
    tag = torch.Tag.nondeterministic_seeded
    return any(isinstance(n.target, torch._ops.OpOverload) and tag in n.target.tags
               for n in gm.graph.nodes if n.op == "call_function")


def _fake_mode(example_inputs: Sequence[Any]):
    from torch._guards import detect_fake_mode
    return detect_fake_mode(example_inputs)


def _cpu_inputs(example_inputs: Sequence[Any], fake_mode) -> list:
    out = []
    for x in example_inputs:
        if isinstance(x, torch.Tensor) and x.device.type == "flagos":
            with fake_mode:
                x = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=_CPU)
        out.append(x)
    return out


def _retarget(gm: GraphModule, example_inputs: Sequence[Any]) -> tuple[list, list[bool], int]:
    """Makes ``gm`` a CPU graph in place. Returns its CPU example inputs,
    which results were flagos tensors, and the flagos device it ran on."""
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    results = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    flagos_results = [_flagos(_value_device(r)) for r in results]

    devices = [x.device.index for x in example_inputs
               if isinstance(x, torch.Tensor) and x.device.type == "flagos"]
    devices += [d.index for d in (_value_device(n) for n in gm.graph.nodes) if _flagos(d)]
    device = next((d for d in devices if d is not None), torch.flagos.current_device())

    for node in gm.graph.nodes:
        node.args = map_aggregate(node.args, _as_cpu)
        node.kwargs = map_aggregate(node.kwargs, _as_cpu)
    for name, value in list(gm.named_buffers()) + list(gm.named_parameters()):
        if value.device.type == "flagos":
            raise RuntimeError(f"[flagos] compile: graph attribute '{name}' is a flagos tensor; "
                               "the cpp codegen path takes graph inputs only")
    gm.recompile()

    fake_mode = _fake_mode(example_inputs)
    if fake_mode is None:
        from torch._subclasses.fake_tensor import FakeTensorMode
        fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    cpu_inputs = _cpu_inputs(example_inputs, fake_mode)
    cpu_semantics.integer_histc(gm)
    cpu_semantics.CpuFakeProp(gm, mode=fake_mode).propagate_dont_convert_inputs(*cpu_inputs)
    gm.recompile()  # views the CPU's layouts made reshapes
    return cpu_inputs, flagos_results, device


def inner_compile(gm: GraphModule, example_inputs: Sequence[Any], **kwargs) -> Callable:
    """Inductor's ``inner_compile`` for flagos graphs on the cpp path."""
    from torch._inductor.compile_fx import compile_fx_inner

    if not any(_flagos(_value_device(n)) for n in gm.graph.nodes) and not any(
            isinstance(x, torch.Tensor) and x.device.type == "flagos" for x in example_inputs):
        return compile_fx_inner(gm, example_inputs, **kwargs)
    seeded = _seeded(gm)
    cpu_inputs, flagos_results, device = _retarget(gm, example_inputs)
    kwargs["cudagraphs"] = False
    compiled = compile_fx_inner(gm, cpu_inputs, **kwargs)

    def run(args: list) -> list:
        return _C._host_call(compiled, args, device, flagos_results, seeded)

    run._boxed_call = True  # Inductor's calling convention: one list, consumed
    return run
