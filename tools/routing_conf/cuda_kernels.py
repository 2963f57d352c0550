"""Which ATen operators have a CUDA kernel, read from the native_functions.yaml
that torch ships (torchgen/packaged): a CPU-only torch registers no CUDA
kernels, so the dispatcher cannot answer this on the CPU machine. (A CUDA
torch's dispatcher is asked as well: see facts.py.)"""

from __future__ import annotations

import os
import re

_FUNC = re.compile(r"^- func: ([\w.]+)\(")
_KEY_LINE = re.compile(r"^\s{4}([\w, ]+):\s*\S")


def yaml_path() -> str:
    import torchgen

    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native",
                        "native_functions.yaml")


def ops_with_cuda_kernel(path: str | None = None) -> set[str]:
    """Op names ("add.Tensor", "mm") whose dispatch names CUDA, directly or
    through structured_delegate (structured ops register every variant)."""
    entries: dict[str, dict] = {}
    current = None
    in_dispatch = False
    with open(path or yaml_path()) as f:
        for line in f:
            m = _FUNC.match(line)
            if m:
                current = {"keys": set(), "delegate": None}
                entries[m.group(1)] = current
                in_dispatch = False
                continue
            if current is None:
                continue
            stripped = line.strip()
            if stripped.startswith("structured_delegate:"):
                current["delegate"] = stripped.split(":", 1)[1].strip()
            elif stripped == "ufunc_inner_loop:":
                # torchgen generates the CPU and CUDA kernels of ufunc ops
                # (add.out): their dispatch block names neither.
                current["keys"].update(("CPU", "CUDA"))
            elif stripped == "dispatch:":
                in_dispatch = True
            elif in_dispatch:
                km = _KEY_LINE.match(line)
                if km:
                    current["keys"].update(k.strip() for k in km.group(1).split(","))
                elif not line.startswith("    "):
                    in_dispatch = False
    def has_cuda(name: str, depth: int = 0) -> bool:
        e = entries.get(name)
        if e is None or depth > 4:
            return False
        if "CUDA" in e["keys"]:
            return True
        return bool(e["delegate"]) and has_cuda(e["delegate"], depth + 1)
    return {name for name in entries if has_cuda(name)}
