"""Run a function right after a module is first imported.

torch._dynamo and torch._inductor take seconds to import, so ``import
torch_fl`` must not import them; their registries are filled the moment they
load instead. A finder in front of sys.meta_path wraps the named module's
loader so that, once the module executed, the waiting functions run.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Callable

_waiting: dict[str, list[Callable]] = {}
_lock = threading.RLock()


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        with _lock:
            hooks = _waiting.pop(module.__name__, [])
        for hook in hooks:
            hook(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _waiting:
            return None
        # The other finders decide where the module is; only its loader is wrapped.
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_finder = _Finder()


def after_import(name: str, hook: Callable) -> None:
    """Calls ``hook(module)`` once ``name`` is imported: now, if it already is."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            _waiting.setdefault(name, []).append(hook)
            if _finder not in sys.meta_path:
                sys.meta_path.insert(0, _finder)
            return
    hook(module)
