"""FlagGems' operator list, read statically (no import: flag_gems needs
triton and a GPU) from the _FULL_CONFIG tuple in flag_gems/__init__.py of an
installed package, a source tree or a wheel."""

from __future__ import annotations

import ast
import os
import zipfile


def _init_source(source: str) -> str:
    if source.endswith(".whl"):
        with zipfile.ZipFile(source) as z:
            return z.read("flag_gems/__init__.py").decode()
    if os.path.isdir(source):
        source = os.path.join(source, "flag_gems", "__init__.py") \
            if os.path.isdir(os.path.join(source, "flag_gems")) else os.path.join(source, "__init__.py")
    with open(source) as f:
        return f.read()


def read_ops(source: str) -> list[str]:
    """Op names of _FULL_CONFIG, sorted and unique."""
    tree = ast.parse(_init_source(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_FULL_CONFIG" for t in node.targets):
            ops = set()
            for item in node.value.elts:
                if isinstance(item, ast.Tuple) and item.elts and isinstance(item.elts[0], ast.Constant):
                    ops.add(item.elts[0].value)
            return sorted(ops)
    raise ValueError(f"[flagos] no _FULL_CONFIG in {source}")


def load_list(path: str) -> list[str]:
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]
