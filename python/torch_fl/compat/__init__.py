"""Shims for another framework's assumption about the device (not a vendor's
runtime): each one module with its switch, installed by ``install()`` at
import (docs/environment-variables.md, "framework shims"). Each waits for its
framework's module to load, so ``import torch_fl`` imports none of them.

  cuda_alias       FLAGOS_ALIAS_CUDA: the "cuda" device string means flagos,
                   on any plugin with a device;
  transformers_device  with the alias: TrainingArguments.device says flagos;
  cuda_shim        torch.cuda's everyday functions answer from flagos, on
                   any plugin with a device, unless the process has native
                   CUDA and the alias is off (then torch.cuda stays CUDA's);
  apex             Apex's multi-tensor kernels on flagos tensors, where the
                   plugin is CUDA-ABI or host-addressable;
  flex_attention   every plugin;
  hub_kernels      every plugin: Hugging Face kernels' device check lets
                   flagos through (transformers kernelizes on .train());
  data_parallel    any plugin with a device: nn.DataParallel over a module on
                   flagos runs it on its one device (replication is CUDA-only);
  qwen_image_rope  plugins that declare it ([compat] qwen_image_rope in their
                   manifest: gcu and ascend, whose stacks serve (gcu) or
                   build (ascend) diffusers' complex rotary operands badly).

docs/compat.md describes each: what it changes, its switch and its cost.

FLAGOS_STARTUP_PROFILE=minimal leaves them out of the import; ``activate()``
installs them later, for the same plugin, as the full profile would have.
"""

from __future__ import annotations

import torch

from torch_fl import _env, _manifest
from torch_fl._after_import import after_import


_plugin: str | None = None
_installed: set[str] = set()


def install(plugin_name: str | None = None) -> None:
    """The import step: installs the shims in the full profile; in the
    minimal one only remembers the plugin they are for."""
    global _plugin
    _plugin = plugin_name
    if _env.get("FLAGOS_STARTUP_PROFILE") != "minimal":
        activate()


def activate() -> list[str]:
    """Installs the framework shims for the plugin (each once) and returns
    their names: what the full profile does at import, for a process started
    with the minimal one."""
    names = []
    has_device = torch.flagos.device_count() > 0
    if has_device:
        if _env.get("FLAGOS_ALIAS_CUDA"):
            names += ["cuda_alias", "transformers_device"]
        if not _env.get("FLAGOS_DISABLE_CUDA_SHIM") and ("cuda_alias" in names or not native_cuda()):
            names.append("cuda_shim")
    if has_device and not _env.get("FLAGOS_DISABLE_APEX_COMPAT"):
        from torch_fl.compat import apex
        if apex.applies():
            names.append("apex")
    if not _env.get("FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT"):
        names.append("flex_attention")
    names.append("hub_kernels")
    if has_device:
        names.append("data_parallel")
    if (_manifest.declared(_plugin, "compat", "qwen_image_rope", bool, False)
            and not _env.get("FLAGOS_DISABLE_QWENIMAGE_ROPE")):
        names.append("qwen_image_rope")
    _install([n for n in names if n not in _installed])
    _installed.update(names)
    return names


def installed() -> list[str]:
    """The shims in place in this process, sorted."""
    return sorted(_installed)


def native_cuda() -> bool:
    """Whether torch itself has a usable CUDA device in this process."""
    from torch_fl.compat import cuda_shim

    return torch.backends.cuda.is_built() and cuda_shim.native("is_available")()


def _install(names: list[str]) -> None:
    if "cuda_alias" in names:
        from torch_fl.compat import cuda_alias
        cuda_alias.install()
    if "apex" in names:
        from torch_fl.compat import apex
        after_import(apex.MODULE, apex.install)
    if "transformers_device" in names:
        from torch_fl.compat import transformers_device
        after_import(transformers_device.MODULE, transformers_device.install)
    if "cuda_shim" in names:
        from torch_fl.compat import cuda_shim
        cuda_shim.install()
    if "flex_attention" in names:
        from torch_fl.compat import flex_attention
        after_import("torch.nn.attention.flex_attention", flex_attention.relax_device_gate)
    if "data_parallel" in names:
        from torch_fl.compat import data_parallel
        after_import(data_parallel.MODULE, data_parallel.install)
    if "hub_kernels" in names:
        from torch_fl.compat import hub_kernels
        after_import(hub_kernels.MODULE, hub_kernels.install)
    if "qwen_image_rope" in names:
        from torch_fl.compat import qwen_image_rope
        after_import(qwen_image_rope.MODULE, qwen_image_rope.install)
