"""Plugin wheels advertise themselves through the ``torch_fl.plugins``
entry-point group. Each entry point names a callable (or a string attribute)
giving the absolute path of the wheel's ``libflagos_<name>.so``::

    [project.entry-points."torch_fl.plugins"]
    cuda = "torch_fl_plugin_cuda:library_path"

Only the advertising module is imported, never the library: loading and
validation belong to the core.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

GROUP = "torch_fl.plugins"


def entry_point_candidates() -> list[tuple[str, str]]:
    """(name, library path) for every installed plugin wheel. A broken entry
    point is reported on one line and skipped: it must not break the import."""
    found = []
    for ep in entry_points(group=GROUP):
        try:
            target = ep.load()
            path = target() if callable(target) else target
            found.append((ep.name, str(path)))
        except Exception as exc:  # a third-party package's bug, not ours to raise
            print(f"[flagos] plugin entry point '{ep.name}' ({ep.value}) failed: {exc}; skipping it",
                  file=sys.stderr)
    return found


def state(candidate: dict) -> str:
    """What a listed plugin finds here: its devices and the plugin's note on
    them (where they come from, or why there are none), in one line.
    A plugin whose requirements are unmet is not loaded at all."""
    from torch_fl import _C

    if candidate.get("unavailable"):
        return f"not loaded unless named: {candidate['unavailable']}"
    try:
        info = _C.inspect_plugin(candidate["name"], candidate["path"])
    except Exception as exc:  # the loader's one-line reason
        return f"fails to load: {exc}"
    count = info["device_count"]
    state = f"{count} device{'' if count == 1 else 's'}"
    # The note: why none, or where the devices come from (e.g. which runtime library).
    return f"{state}: {info['device_note']}" if info.get("device_note") else state
