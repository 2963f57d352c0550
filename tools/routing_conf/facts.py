"""What the installed torch and the active plugin say about every ATen
operator: the routing universe and each route kind's coverage."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Facts:
    torch_version: str
    routable: list[str]                      # sorted op names a conf may list
    cpu: set[str] = field(default_factory=set)      # runs under the CPU key
    cuda: set[str] = field(default_factory=set)     # has a CUDA kernel (yaml or a CUDA torch)
    native_host: set[str] = field(default_factory=set)  # host plugin kernels (+ derived forms)
    # Leaf ops with a CUDA kernel (native_functions.yaml) that this torch
    # cannot route only for want of a kernel: a CPU-only torch lacks them.
    cuda_only: set[str] = field(default_factory=set)
    excluded: dict[str, int] = field(default_factory=dict)  # reason -> count


# The catalog's reason for an op without a CPU, CUDA or composite kernel
# (core/dispatch/catalog.cpp); every other reason holds on any torch.
NO_KERNEL = "has no CPU, CUDA or composite kernel in this torch"


def _op_name(qualified: str, overload: str) -> str:
    base = qualified.split("::", 1)[1]
    return f"{base}.{overload}" if overload else base


def collect(native: bool = True) -> Facts:
    """Needs torch_fl imported with an empty routing conf (see __main__).
    `native=False` skips asking the active plugin for its kernels."""
    import torch
    import torch_fl  # noqa: F401
    from torch_fl import _C

    from tools.routing_conf.cuda_kernels import ops_with_cuda_kernel

    has = torch._C._dispatch_has_kernel_for_dispatch_key
    facts = Facts(torch.__version__, [])

    from torch_fl import _routing

    options = _routing.catalog_options()

    def reason_of(op: str) -> str:
        return _C._unroutable_reason(op, options)

    cuda_yaml = ops_with_cuda_kernel()
    for qualified in torch._C._dispatch_get_all_op_names():
        if not qualified.startswith("aten::"):
            continue
        facts_for(qualified, has, reason_of, cuda_yaml, facts)
    facts.routable.sort()
    if native:
        facts.native_host = {op for op in facts.routable if _C._native_serves(op)}
    return facts


def facts_for(qualified: str, has, reason_of, cuda_yaml, facts: Facts) -> None:
    name, _, overload = qualified.partition(".")
    op = _op_name(name, overload)
    reason = reason_of(op)
    if reason:
        key = reason.split(":")[0].split(" (")[0]
        facts.excluded[key] = facts.excluded.get(key, 0) + 1
        if key == NO_KERNEL and op in cuda_yaml:
            facts.cuda_only.add(op)
        return
    composite = has(qualified, "CompositeExplicitAutograd") or \
        has(qualified, "CompositeExplicitAutogradNonFunctional")
    facts.routable.append(op)
    if has(qualified, "CPU") or composite:
        facts.cpu.add(op)
    if op in cuda_yaml or composite or has(qualified, "CUDA"):
        facts.cuda.add(op)
