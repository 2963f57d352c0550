"""The flagcx tier: FlagCX's torch plugin, where it is installed, serves the
flagos tensors of a "flagos" group (docs/distributed.md, "FlagCX").

What this relies on, from FlagCX's plugin/torch (github.com/flagos-ai/FlagCX,
v0.13.0 and main):
- the plugin is the Python package ``flagcx`` (plugin/torch/setup.py), whose
  ``__init__`` imports the extension ``flagcx._C``;
- loading ``flagcx._C`` registers the backend itself: a load-time constructor
  (``flagcxBackend::flagcxBackendConstructor``, flagcx/include/backend_flagcx.hpp)
  calls ``torch.distributed.Backend.register_backend("flagcx",
  createFlagcxBackend, devices=(<device>,))``, with ``extended_api=True`` on
  the nvidia and metax builds (torch >= 2.5);
- so the creator is taken from torch's record of that registration and called
  as torch calls it: ``creator(DistributedBackendOptions, options)`` when
  extended (``options``: the group's, else ``flagcx._C.ProcessGroupFlagCX.Options()``,
  FlagCX's own default), else ``creator(store, rank, size, timeout)``; it
  returns a ``c10d::Backend`` (``flagcxBackend``);
- ``FLAGCX_TORCH_BACKEND=flagos`` selects FlagCX's torch_fl build. v0.13.0 and
  main do not read it; FlagCX pull request 546 (Enflame) reads it in its
  setup.py and in ``flagcx/__init__.py``, which then imports torch_fl instead
  of torch_gcu, and that build registers for the "flagos" device. torch_fl
  sets it when unset, before the import;
- ``flagcx/__init__.py`` sets TORCH_DEVICE_BACKEND_AUTOLOAD=0 around its
  ``import torch`` and then pops it, whatever it was before;
- its setup.py declares the entry point ``torch.backends: flagcx = flagcx:init``,
  so torch's device-backend autoload may import it during ``import torch``,
  before torch_fl can set the selector.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import torch.distributed as dist

from torch_fl import _env

MODULE = "flagcx"
BACKEND = "flagcx"
SELECTOR = "FLAGCX_TORCH_BACKEND"
AUTOLOAD = "TORCH_DEVICE_BACKEND_AUTOLOAD"

# Why importing the plugin failed, once it has: later groups skip it.
_import_failure: str | None = None


class Unavailable(RuntimeError):
    """FlagCX's plugin could not be imported, or gave no backend for a group."""


def wanted() -> bool:
    """Whether a group built now tries FlagCX first. Imports nothing: the
    plugin is imported when the first such group is built."""
    if _import_failure is not None or _env.get("FLAGOS_DIST_FORCE_NCCL"):
        return False
    try:
        return importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):
        return False


def _plugin():
    """Imports FlagCX's plugin (once) and returns torch's record of the
    backend it registered."""
    global _import_failure
    if _import_failure is not None:
        raise Unavailable(_import_failure)
    if MODULE not in sys.modules:  # else torch's autoload imported it: too late to select
        _env.set_foreign(SELECTOR, "flagos")
    autoload = os.environ.get(AUTOLOAD)
    try:
        module = importlib.import_module(MODULE)
    except Exception as e:  # a missing library is an OSError, a bad build anything
        _import_failure = f"import {MODULE} failed: {type(e).__name__}: {e}"
        raise Unavailable(_import_failure) from e
    finally:
        if autoload is not None:  # its __init__ pops the variable
            os.environ[AUTOLOAD] = autoload
    record = dist.Backend._plugins.get(BACKEND.upper())
    if record is None:
        _import_failure = (f"importing {MODULE} ({getattr(module, '__file__', '?')}) registered no "
                           f"'{BACKEND}' backend with torch.distributed")
        raise Unavailable(_import_failure)
    return module, record


def create(opts, pg_options, timeout):
    """FlagCX's backend for the group described by `opts` (torch's extended
    creator arguments). Raises Unavailable with the reason."""
    module, record = _plugin()
    try:
        if record.extended_api:
            if pg_options is None:
                pg_class = getattr(getattr(module, "_C", None), "ProcessGroupFlagCX", None)
                pg_options = pg_class.Options() if hasattr(pg_class, "Options") else None
            return record.creator_fn(opts, pg_options)
        return record.creator_fn(opts.store, opts.group_rank, opts.group_size, timeout)
    except Exception as e:
        raise Unavailable(f"creating FlagCX's '{BACKEND}' backend failed "
                          f"({SELECTOR}={os.environ.get(SELECTOR, '')}): {type(e).__name__}: {e}") from e
