"""torch_fl: one PyTorch device, ``flagos``, on every accelerator plugin.

Import sequence (each step one concern):
  1. load torch, then the core (torch_fl._C, which links libtorch_fl_core.so
     and registers the PrivateUse1 guard, hooks, allocators and kernels);
  2. scan the environment once (torch_fl._env): one [flagos] line per unknown
     FLAGOS_* name and per set runtime variable whose value does not parse;
  3. activate one plugin: an explicit FLAGOS_PLUGIN, else an accelerator
     plugin that finds a device, else the host plugin (one info line);
  4. name PrivateUse1 "flagos", register torch.flagos, generate the
     tensor/module/storage ``.flagos()`` methods (torch_fl._device);
  5. validate or fill GEMS_VENDOR for that plugin (torch_fl._vendor).

What the build used (accelerator, kernel sets, versions) is read from the
build record, torch_fl/_build_config.py, written at build time; see
build_config(). The import sequence does not re-read any build variable.

``python -m torch_fl <verb>`` skips steps 3-5: its verbs (conformance above
all) must work when the configured plugin is the broken thing being examined.
"""

from __future__ import annotations

import sys

import torch  # noqa: F401  (libtorch must be loaded before the core)

from torch_fl import _C, _build_config_reader, _device, _env, _vendor
from torch_fl._plugins import entry_point_candidates

__version__ = "0.1.0"
ABI_VERSION: str = _C.ABI_VERSION


def activate() -> dict:
    """Selects and loads the process's plugin (once); returns plugin_info()."""
    return dict(_C.activate(entry_point_candidates()))


def plugin_info() -> dict:
    """The active plugin: name, path, origin, ABI, device count, options."""
    info = _C.active_plugin()
    if info is None:
        raise RuntimeError("[flagos] no plugin is active yet; call torch_fl.activate()")
    return dict(info)


def installed_plugins() -> list[dict]:
    """Every plugin the core can see: plugin wheels, then the build directory."""
    return list(_C.discover(entry_point_candidates()))


def build_config() -> dict:
    """The build record (ACCELERATOR, KERNELS, JOBS, WHEEL_VERSION, VERSIONS, ...)
    merged with the active plugin's info under "PLUGIN" (None while no plugin
    is active, e.g. under `python -m torch_fl` before a verb activates one)."""
    config = _build_config_reader.record()
    plugin = _C.active_plugin()
    config["PLUGIN"] = None if plugin is None else dict(plugin)
    return config


# While `python -m torch_fl` locates its __main__, sys.argv[0] is "-m"
# (documented interpreter behaviour): that is the CLI, which activates lazily.
_env.check_environment()
if sys.argv[:1] != ["-m"]:
    _plugin_name = activate()["name"]
    _device.register()
    _vendor.configure(_plugin_name)

__all__ = ["ABI_VERSION", "activate", "plugin_info", "installed_plugins", "build_config"]
