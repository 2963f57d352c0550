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
