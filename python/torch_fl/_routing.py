"""Per-operator routing (docs/routing.md): which conf is in use, installing
it at import, and introspection.

The conf comes from ``FLAGOS_BACKEND_CONFIG`` when the user exported it
(never written by this package), else from the build record's default for the
active plugin. The core loads it, applies ``FLAGOS_OP_<op>`` and
``FLAGOS_FORCE_BACKEND``, checks every route against this torch, build and
plugin, and registers one kernel per listed operator; nothing is looked up
per call.
"""

from __future__ import annotations

import os
from typing import Callable, Optional

import torch

from torch_fl import _C, _build_config_reader, _env

# Python implementations for the `flaggems` route: op name -> callable taking
# the op's arguments (kwarg-only ones by keyword). FlagGems fills it on
# accelerators; tests register small ones.
_python_impls: dict[str, Callable] = {}
_C._set_python_registry(_python_impls, "flaggems")


def confs_dir() -> str:
    """Where the build installed the platform confs (beside _C)."""
    return os.path.join(os.path.dirname(os.path.abspath(_C.__file__)), "confs")


def _plugin_name() -> Optional[str]:
    info = _C.active_plugin()
    return None if info is None else info["name"]


def require_absolute(path: str, what: str) -> str:
    """One rule for every conf a user names (FLAGOS_BACKEND_CONFIG, `conf
    check`): an absolute path, so that it means the same file in every
    working directory and child process."""
    if not os.path.isabs(path):
        raise RuntimeError(f"[flagos] {what} must be an absolute path, got '{path}'")
    return path


def backend_config_path() -> str:
    """The routing conf in use: ``FLAGOS_BACKEND_CONFIG`` when exported, else
    the build record's default for the active plugin (default.toml, which
    lists nothing, for a plugin the build ships no conf for)."""
    override = _env.get("FLAGOS_BACKEND_CONFIG")
    if override:
        return require_absolute(override, "FLAGOS_BACKEND_CONFIG")
    name = _build_config_reader.record().get("BACKEND_CONFIGS", {}).get(_plugin_name() or "")
    return os.path.join(confs_dir(), name or "default.toml")


def _flaggems_switch() -> tuple[bool, str]:
    if _env.get("FLAGOS_DISABLE_FLAGGEMS_PY"):
        return False, "FLAGOS_DISABLE_FLAGGEMS_PY=1 leaves the FlagGems Python layer unregistered"
    return _build_config_reader.kernel_switch("flaggems", "FLAGOS_BUILD_FLAGGEMS", default=True)


def flaggems_unavailable_reason() -> str:
    """Why the `flaggems` route cannot run in this process ("" when it can)."""
    enabled, reason = _flaggems_switch()
    if enabled and not _python_impls:
        from torch_fl import _flaggems

        enabled, reason = False, _flaggems.status()
    return "" if enabled else reason


def catalog_options() -> dict:
    """What the core's route catalog needs to know about this build and process."""
    from torch_fl import _flaggems_cpp, tileops

    reason = flaggems_unavailable_reason()
    tileops_reason = tileops.unavailable_reason()
    return {
        "torch_version": torch.__version__,
        "flaggems_enabled": not reason,
        "flaggems_off_reason": reason,
        "boxing_compiled": _build_config_reader.kernel_switch("boxing", "FLAGOS_BUILD_BOXING")[0],
        "flaggems_ops": _flaggems_ops(),
        "flaggems_cpp_enabled": _flaggems_cpp.loaded(),
        "flaggems_cpp_off_reason": "" if _flaggems_cpp.loaded() else _flaggems_cpp.status(),
        "tileops_enabled": not tileops_reason,
        "tileops_off_reason": tileops_reason,
        "tileops_ops": tileops.ops(),
    }


def _flaggems_ops() -> list[str]:
    """FlagGems' published operator list, shipped beside the confs."""
    path = os.path.join(confs_dir(), "flaggems_ops.txt")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


_route_kinds_read: dict[tuple, frozenset] = {}


def conf_route_kinds(path: Optional[str] = None) -> set[str]:
    """The route kinds the conf (default: the one in use) names, includes
    and default included. A conf that cannot be read names none here: its
    error is reported, with file and line, when routes are installed. The
    import asks once per Python-loaded route kind: a conf is parsed once
    while its file stays the same."""
    path = path or backend_config_path()
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _route_kinds_read:
        return set(_route_kinds_read[key])
    try:
        kinds = frozenset(_C._conf_route_kinds(path))
    except RuntimeError:
        return set()
    if key is not None:
        _route_kinds_read[key] = kinds
    return set(kinds)


def may_route_to(kind: str) -> bool:
    """Whether any route of this process may be a `kind` one ("flaggems",
    "tileops"): FLAGOS_FORCE_BACKEND names it, a FLAGOS_OP_<op> routes to it,
    or the conf in use does (the variables read through the registry, as the
    core reads them)."""
    forced = str(_env.get("FLAGOS_FORCE_BACKEND") or "").strip().lower()
    if forced == kind or (forced == "flaggems" and kind == "flaggems_cpp"):  # the flaggems family's two kinds
        return True
    overrides = (k for k in os.environ if k.startswith("FLAGOS_OP_") and _env.family_of(k) is not None)
    if any(str(_env.get(k) or "").strip().lower() == kind for k in overrides):
        return True
    return kind in conf_route_kinds()


def why_not_load(kind: str, switch: tuple[bool, str], force: bool = False) -> str:
    """Why the Python layer of route kind `kind` ("flaggems", "tileops") is
    not loaded now ("" to load it): its build `switch` is off, or no route of
    this process may take it (unless `force`: a conf being checked names it)."""
    enabled, reason = switch
    if not enabled:
        return reason
    if not force and not may_route_to(kind):
        return (f"not loaded: no route needs it (the conf in use routes nothing to {kind}, and neither "
                "FLAGOS_FORCE_BACKEND nor a FLAGOS_OP_<op> asks for it)")
    return ""


def install() -> dict:
    """Import step: installs the conf in use (once per process)."""
    return _C._install_routes(backend_config_path(), catalog_options())


def routes(op: Optional[str] = None) -> list[dict]:
    """Every listed operator's route: ``{"op", "route", "why"[, "error"]}``.
    Unlisted operators take the default route (``default_route()``) when it
    can run them, else the CPU fallback.
    With ``op``, that operator's entry (the default route when unlisted)."""
    table = _C._routes()
    if table is None:
        raise RuntimeError("[flagos] no routes are installed yet (import torch_fl first)")
    if op is None:
        return list(table["routes"])
    for r in table["routes"]:
        if r["op"] == op:
            return [r]
    reason = _C._unroutable_reason(op, catalog_options())
    if reason:
        return [{"op": op, "route": "n/a", "why": reason}]
    default = dict(table["default"])
    default["op"] = op
    if default["route"] != "cpu_fallback" and op not in table["default_served"]:
        # The default route has no implementation of it: the global fallback runs it.
        default.update(route="cpu_fallback", why=f'{default["why"]}; {default["route"]} cannot run it')
    return [default]


def route_counts(rows: list[dict]) -> dict[str, int]:
    """How many of ``rows`` (routes() entries) take each route kind."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["route"]] = counts.get(r["route"], 0) + 1
    return dict(sorted(counts.items()))


def describe_counts(rows: list[dict]) -> str:
    """``route_counts`` in one line: "cpu 2032, flaggems 12"."""
    return ", ".join(f"{k} {v}" for k, v in route_counts(rows).items())


def default_route() -> dict:
    table = _C._routes()
    return dict(table["default"]) if table else {}


def check_conf(path: str) -> tuple[list[dict], list[str]]:
    """Validates ``path`` against the installed torch and the active plugin
    without installing it. Raises RuntimeError naming file:line on errors;
    returns (routes, notes) where notes are what installing it would report."""
    require_absolute(path, "the conf to check")
    if "flaggems" in conf_route_kinds(path):
        from torch_fl import _flaggems

        _flaggems.load(force=True)  # the conf in use may not have needed it
    if "flaggems_cpp" in conf_route_kinds(path):
        from torch_fl import _flaggems_cpp

        _flaggems_cpp.load(force=True)
    if "tileops" in conf_route_kinds(path):
        from torch_fl import tileops

        tileops.load(force=True)
    table, notes = _C._check_conf(path, catalog_options())
    return list(table["routes"]), list(notes)


def register_python_impl(op: str, fn: Callable) -> None:
    """Registers the implementation the `flaggems` route calls for ``op``
    ("add.Tensor"). Must happen before import-time routing sees the op as
    implemented, i.e. before ``import torch_fl`` installs routes, or be
    consumed by a conf checked later."""
    _python_impls[op] = fn
