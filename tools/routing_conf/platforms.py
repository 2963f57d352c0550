"""Which confs each platform gets, and what routes each one lists.

Route-kind preference per platform, most specific first:
  host           cpu (zero-copy CPU kernels); host_native.toml adds the host
                 plugin's reference kernels on `native` over it
  cuda, ppu,     cuda.toml: every op with a CUDA kernel on boxing (`cuda`),
                 the TileOps operators annotated for FLAGOS_FORCE_BACKEND=tileops;
  metax, dcu     <p>_flaggems.toml / <p>.toml: FlagGems ops on `flaggems`,
                 included over the boxing conf
  musa, ascend,  FlagGems ops on `flaggems`; the plugin's native operators
  gcu,           that a measurement passed (`measure`) on `native`; everything
  tsingmicro     else the default (cpu_fallback)
  bpu            nothing listed (no FlagGems on bpu): cpu_fallback
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ConfSpec:
    file: str
    platform: str
    description: str
    include: list[str] = field(default_factory=list)
    route_sets: list[tuple[str, str]] = field(default_factory=list)  # (facts set, route kind)
    # The route of unlisted ops where it can run them (else cpu_fallback).
    # "cuda" for the CUDA confs: a CPU-only torch, which generates the shipped
    # files, cannot route CUDA-only ops (the fused attention kernels), and a
    # torch newer than the generating one has ops no list names; the running
    # torch's CUDA kernel serves both.
    default: str = "cpu_fallback"
    # Annotate the operators the tileops route implements (torch_fl.tileops.table)
    # among those listed: FLAGOS_FORCE_BACKEND=tileops repins them.
    tileops: bool = False
    # List on `native` the operators a measurement of this platform's plugin
    # passed (confs/sources/<platform>_native.json, `measure`), where no
    # route set lists them already.
    measured_native: bool = False


# Ops no conf lists on the cuda route, FLAGOS_CODEGEN_ALL or not, each with
# the reason: native_functions.yaml names a CUDA kernel that does not serve them.
NOT_ON_CUDA = {
    "_triton_scaled_dot_attention": "its CUDA kernel only raises until Python code overrides it",
}


def cuda_ops(routable_cuda: set[str], cuda_only: set[str], codegen_all: bool) -> set[str]:
    """The ops cuda.toml lists: those this torch routes with a CUDA kernel, and
    under FLAGOS_CODEGEN_ALL also the leaf ops only a CUDA torch can route."""
    ops = routable_cuda | cuda_only if codegen_all else set(routable_cuda)
    return ops - NOT_ON_CUDA.keys()


CUDA_LIKE = ("ppu", "metax", "dcu")
FLAGGEMS_ONLY = ("musa", "ascend", "gcu", "tsingmicro")


def conf_specs() -> list[ConfSpec]:
    specs = [
        ConfSpec("host.toml", "host",
                 "host plugin: every op the installed torch can run on the CPU, zero-copy",
                 route_sets=[("cpu", "cpu")]),
        ConfSpec("host_native.toml", "host",
                 "host plugin with its reference kernels on the native route",
                 include=["host.toml"], route_sets=[("native_host", "native")]),
        ConfSpec("cuda.toml", "cuda",
                 "CUDA boxing: every op with a CUDA kernel in the installed torch",
                 route_sets=[("cuda", "cuda")], default="cuda", tileops=True),
        ConfSpec("cuda_flaggems.toml", "cuda",
                 "FlagGems-primary: FlagGems ops on flaggems, the rest on CUDA boxing",
                 include=["cuda.toml"], route_sets=[("flaggems", "flaggems")], default="cuda"),
    ]
    for p in CUDA_LIKE:
        specs.append(ConfSpec(f"{p}.toml", p,
                              f"{p}: FlagGems ops on flaggems, the rest on CUDA boxing (CUDA-ABI runtime)",
                              include=["cuda.toml"], route_sets=[("flaggems", "flaggems")]))
    for p in FLAGGEMS_ONLY:
        specs.append(ConfSpec(f"{p}.toml", p,
                              f"{p}: FlagGems ops on flaggems, the rest cpu_fallback",
                              route_sets=[("flaggems", "flaggems")], measured_native=True))
    specs.append(ConfSpec("bpu.toml", "bpu", "bpu: no FlagGems; every op cpu_fallback"))
    return specs
