"""The compile variables the import sets or checks (docs/compile.md).

Two Inductor settings are pinned by export *and* attribute: the export
reaches Inductor's compile workers and a torch._inductor.config imported
later; the attribute a config imported already. An explicit export wins.
"""

from __future__ import annotations

import os

import torch

from torch_fl import _env, _manifest
from torch_fl._after_import import after_import



def _pin(variable: str, attribute: str, value: str, python_value) -> None:
    if not _env.set_foreign(variable, value):
        return

    def apply(config) -> None:
        setattr(config, attribute, python_value)

    after_import("torch._inductor.config", apply)


def pin(plugin_name: str) -> None:
    if not hasattr(torch._C, "_StaticCudaLauncher"):
        _pin("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "use_static_cuda_launcher", "0", False)
    # A compiler the plugin declares fork-unsafe ([compile] fork_safe = false)
    # must not run in a forked worker: the worker never imports torch_fl, so
    # the vendor's Triton driver finds no active device there.
    if not _manifest.declared(plugin_name, "compile", "fork_safe", bool, True):
        _pin("TORCHINDUCTOR_COMPILE_THREADS", "compile_threads", "1", 1)


def flagtree_problem() -> str | None:
    """With FLAGOS_USE_FLAGTREE=1, why the active Triton is not FlagTree (else None)."""
    if not _env.get("FLAGOS_USE_FLAGTREE"):
        return None
    try:
        import triton
    except ImportError:
        return "FLAGOS_USE_FLAGTREE=1, but no Triton (FlagTree or other) is installed"
    version = getattr(triton, "__version__", "")
    names = triton_distributions()
    if is_flagtree(names, version):
        return None
    where = os.path.dirname(getattr(triton, "__file__", "") or "?")
    return (f"FLAGOS_USE_FLAGTREE=1, but the active Triton ({version or 'unknown version'}, "
            f"{where}; distributions: {', '.join(sorted(names)) or 'none'}) is not FlagTree")


def check_flagtree_at_import(plugin_name: str | None) -> None:
    # A plugin whose Triton is FlagTree's build ([triton] flagtree = true)
    # launches FlagGems' eager kernels through it from the first operator,
    # not only what torch.compile generates, so a Triton that is not
    # FlagTree is refused at import instead of at the first compile.
    if not _manifest.declared(plugin_name, "triton", "flagtree", bool, False):
        return
    problem = flagtree_problem()
    if problem:
        raise RuntimeError(f"[flagos] {problem}; the {plugin_name} plugin's Triton kernels "
                           "need FlagTree's build (unset FLAGOS_USE_FLAGTREE to skip the check)")


def triton_distributions() -> dict[str, str]:
    """Installed distributions naming Triton or FlagTree: lowercased name -> version."""
    from importlib import metadata
    found = {}
    for d in metadata.distributions():
        name = (d.metadata["Name"] or "").lower()
        if "triton" in name or "flagtree" in name:
            found[name] = d.version
    return found


def is_flagtree(distributions: dict[str, str], version: str) -> bool:
    """FlagTree ships as the `triton` package and names itself in its
    distribution name or version string."""
    return any("flagtree" in n for n in distributions) or "flagtree" in version.lower()
