"""torch_fl: one PyTorch device, ``flagos``, on every accelerator plugin.

Import sequence (each step one concern):
  1. load torch, then the core (torch_fl._C, which links libtorch_fl_core.so
     and registers the PrivateUse1 guard, hooks, allocators and kernels);
  2. scan the environment once (torch_fl._env): one [flagos] line per unknown
     FLAGOS_* name and per set runtime variable whose value does not parse;
  3. activate one plugin: an explicit FLAGOS_PLUGIN, else an accelerator
     plugin that finds a device, else the host plugin (FLAGOS_LOG=plugin
     and plugin_info()["selection"] say why); an explicit plugin must
     report a device;
  4. validate GEMS_VENDOR for that plugin (torch_fl._vendor), check that
     a vendor torch its wheel bundles was loaded before torch
     (torch_fl._vendor_torch), pair dcu with DTK's torch (FLAGOS_DCU_VENDOR_CORE,
     the HIP release, CUDA-key kernels: torch_fl._dcu_pairing), report a FLAGOS_METAX_CUDART_SHIM that
     came too late (torch_fl._before_torch) and, on ascend, check
     FLAGOS_USE_FLAGTREE (torch_fl.compile); fill the vendor variables the
     platform's stack reads (torch_fl._platform_env: TRITON_ENABLE_TASKQUEUE
     on ascend, HB_DNN_USER_DEFINED_L2M_SIZES on bpu), then install
     the routing table (torch_fl._routing): the conf in use
     (backend_config_path()), FlagGems' operators when available,
     FLAGOS_OP_<op> and FLAGOS_FORCE_BACKEND; the whole conf is checked
     before a kernel is registered;
  5. name PrivateUse1 "flagos", register torch.flagos, generate the
     tensor/module/storage ``.flagos()`` methods (torch_fl._device), let a
     backward on native CUDA run beside flagos (torch_fl._autograd), keep
     tied parameters tied across Module.to("flagos") (torch_fl._compat),
     relax framework device gates such as flex_attention's, and on gcu and
     ascend keep diffusers' Qwen-Image rope off complex operands (torch_fl.compat),
     answer torch.cuda's device queries from flagos where FLAGOS_METAX_COMPAT
     asks (torch_fl._cuda_queries), and
     register the "flagos" torch.distributed backend (torch_fl.distributed)
     and torch.compile's flagos device and backend (torch_fl.compile);
  6. fill GEMS_VENDOR when unset (torch_fl._vendor);
  7. at exit, let flagos' autograd threads finish with the last backward
     before the interpreter goes (torch_fl._exit).

What the build used (accelerator, kernel sets, versions) is read from the
build record, torch_fl/_build_config.py, written at build time; see
build_config(). The import sequence does not re-read any build variable.

``python -m torch_fl <verb>`` skips steps 3-6: its verbs (conformance above
all) must work when the configured plugin is the broken thing being examined.
"""

from __future__ import annotations

import sys

import torch  # noqa: F401  (libtorch must be loaded before the core)

from torch_fl import _C, _autograd, _build_config_reader, _compat, _device, _env, _exit, _flaggems, _flaggems_cpp, _routing, _vendor, distributed, tileops
from torch_fl import _before_torch, _cuda_queries, _dcu_pairing, _platform_env, _vendor_torch, compat
from torch_fl import multiprocessing as _multiprocessing
from torch_fl import compile as _compile
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


def _running_cli() -> bool:
    """True while `python -m torch_fl` imports us to find its __main__: then
    sys.argv[0] is "-m" (documented interpreter behaviour) and the module
    after -m is torch_fl (not another package that imports torch_fl)."""
    if sys.argv[:1] != ["-m"]:
        return False
    argv = list(getattr(sys, "orig_argv", []))
    for i, arg in enumerate(argv):
        if arg == "-m":
            return i + 1 < len(argv) and argv[i + 1].split(".")[0] == "torch_fl"
        if arg.startswith("-m"):
            return arg[2:].split(".")[0] == "torch_fl"
    return True


_initialized = False


def _check_devices(plugin: dict) -> None:
    """An explicitly chosen plugin without a device leaves nothing to run on."""
    if plugin["origin"] == "explicit" and plugin["device_count"] == 0:
        # Why: the requirements it states (checked without loading it), else its own note.
        unmet = [c["unavailable"] for c in installed_plugins()
                 if c["path"] == plugin["path"] and c.get("unavailable")]
        why = unmet[0] if unmet else plugin.get("device_note")
        raise RuntimeError(
            f"[flagos] FLAGOS_PLUGIN={_env.get('FLAGOS_PLUGIN')}: plugin '{plugin['name']}' "
            f"({plugin['path']}) reports 0 devices{f' ({why})' if why else ''}; unset "
            f"FLAGOS_PLUGIN to use the host plugin (`python -m torch_fl info` describes the plugin)")


def _check_forced_backend() -> None:
    """FLAGOS_FORCE_BACKEND=flaggems where FlagGems cannot run, neither its
    Python layer nor its C++ runtime, would fail every forced op."""
    if _env.get("FLAGOS_FORCE_BACKEND") != "flaggems":
        return
    reason = _routing.flaggems_unavailable_reason()
    if reason and not _flaggems_cpp.loaded():
        raise RuntimeError(f"[flagos] FLAGOS_FORCE_BACKEND=flaggems, but FlagGems cannot run here: {reason}; "
                           f"its C++ runtime: {_flaggems_cpp.status()}")


def _initialize() -> None:
    """Import steps 3-6 (once); the CLI runs them only for verbs that need the device.

    All or nothing: every setting is checked (GEMS_VENDOR, the whole conf)
    before anything is registered in torch, and each registering step is
    idempotent, so a failed import leaves no half-made device and a retry
    reports the same cause."""
    global _initialized
    if _initialized:
        return
    plugin = activate()
    _check_devices(plugin)
    _device.check()
    vendor, fill_vendor = _vendor.resolve(plugin["name"])
    _vendor_torch.check(plugin)
    _dcu_pairing.check(plugin["name"])
    _before_torch.check()
    _compile.check_flagtree(plugin["name"])
    _platform_env.fill(plugin["name"])  # before FlagGems imports the vendor's Triton
    _flaggems.load()
    _flaggems_cpp.load()
    tileops.load()
    _check_forced_backend()
    _routing.install()  # the core resolves the whole conf before registering a kernel
    _device.register()
    _autograd.install()
    _multiprocessing.install()
    _compat.install()
    compat.install(plugin["name"])
    _cuda_queries.install(plugin["name"])
    distributed.register()
    _compile.install(plugin["name"])
    if fill_vendor:
        _env.set_foreign(_vendor.NAME, vendor)
    _exit.install()
    _initialized = True


_env.check_environment(keep_lines=_running_cli())
if not _running_cli():
    _initialize()

backend_config_path = _routing.backend_config_path
routes = _routing.routes


def op_cache_stats() -> dict:
    """Hits and misses of the active plugin's operator caches, per native
    kernel that keeps one ({"aten::add.out": {"hits": 9, "misses": 1}}): how
    often a call reused prepared work (an aclnn executor) instead of
    preparing it anew. Empty when no kernel keeps a cache. FLAGOS_LOG=op_cache
    prints the same at exit."""
    return dict(_C._op_cache_stats())


__all__ = ["ABI_VERSION", "activate", "backend_config_path", "build_config", "installed_plugins",
           "op_cache_stats", "plugin_info", "routes"]
