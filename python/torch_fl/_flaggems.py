"""The FlagGems side of the `flaggems` route: at import, before routes are
installed, every (op, function) pair of ``flag_gems._FULL_CONFIG`` becomes a
Python implementation the core may call (wrapped where _flaggems_fixes.py
names a bug of it). Nothing is registered when FlagGems is switched off
(FLAGOS_DISABLE_FLAGGEMS_PY=1, a build without flaggems) or not installed;
routes naming it then take their next route, with one line.

FlagGems is imported only when a route may need it: the conf in use names
`flaggems`, FLAGOS_FORCE_BACKEND=flaggems, or a FLAGOS_OP_<op>=flaggems.
Importing it initialises CUDA (Triton queries the device), which costs
seconds and makes a later os.fork() unsafe, for nothing under cuda.toml.
"""

from __future__ import annotations

import importlib

from torch_fl import _flaggems_fixes, _routing

_status = "not loaded"


def load(force: bool = False) -> int:
    """Registers FlagGems' operators when a route may need them (or `force`:
    a conf being checked names flaggems); returns how many."""
    global _status
    why = _routing.why_not_load("flaggems", _routing._flaggems_switch(), force)
    if why:
        _status = why
        return 0
    try:
        flag_gems = importlib.import_module("flag_gems")
    except ImportError as exc:
        _status = f"flag_gems is not installed ({exc})"
        return 0
    count = 0
    for item in getattr(flag_gems, "_FULL_CONFIG", ()):
        if len(item) < 2 or not isinstance(item[0], str) or not callable(item[1]):
            continue
        # A third item is FlagGems' own condition (e.g. a torch version check).
        if len(item) >= 3 and callable(item[2]) and not item[2]():
            continue
        _routing._python_impls.setdefault(item[0], _flaggems_fixes.fixed(item[0], item[1]))
        count += 1
    _status = f"{count} operators from flag_gems {getattr(flag_gems, '__version__', '?')}"
    return count


def status() -> str:
    return _status
