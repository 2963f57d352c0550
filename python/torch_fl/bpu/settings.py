"""The FLAGOS_BPU_* variables, read once per compile from the declared
environment surface (torch_fl._env), as the driver needs them.

One read is stricter than the shared parser: a micro-architecture outside
the three hbdk4 targets fails with one ``[flagos]`` error naming the allowed
values instead of falling back to nash-p, because an artifact compiled for
the wrong chip would be cached and loaded as if it were right.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from torch_fl import _env

MARCH = "FLAGOS_BPU_MARCH"
CACHE = "FLAGOS_BPU_CACHE"
QUANTIZE = "FLAGOS_BPU_QUANTIZE"
ACT_SCALE = "FLAGOS_BPU_ACT_SCALE"
MLIR_LIBS = "FLAGOS_BPU_MLIR_LIBS"
X86_PYTHON = "FLAGOS_BPU_X86_PYTHON"
X86_EMULATOR = "FLAGOS_BPU_X86_EMULATOR"
X86_STUBS = "FLAGOS_BPU_X86_STUBS"


@dataclass(frozen=True)
class Settings:
    march: str
    cache: Path
    quantize: bool
    act_scale: float
    mlir_libs: Path | None
    x86_python: Path | None
    x86_emulator: Path | None
    x86_stubs: Path | None  # None only while x86_python is unset (it is derived from it)


def _explicit(name: str) -> str | None:
    """The exported value, or None where it is unset or empty (empty is unset)."""
    value = os.environ.get(name)
    return value if value else None


def march() -> str:
    allowed = _env.VARIABLES[MARCH].choices
    value = _explicit(MARCH)
    if value is None:
        return _env.VARIABLES[MARCH].default
    if value not in allowed:
        raise RuntimeError(
            f"[flagos] {MARCH}={value!r} is not a BPU micro-architecture; "
            f"allowed values: {', '.join(allowed)}")
    return value


def act_scale() -> float:
    """The shared parser reports a value that is not a number and yields 0.05;
    a number that cannot scale an activation is refused here."""
    scale = float(_env.get(ACT_SCALE))
    if not math.isfinite(scale) or scale <= 0:
        raise RuntimeError(f"[flagos] {ACT_SCALE}={scale!r} is not a positive scale")
    return scale


def _path(name: str) -> Path | None:
    value = _env.get(name)
    return Path(os.path.expanduser(value)) if value else None


def default_stubs(x86_python: Path) -> Path:
    """<x86 python prefix>/../stubs: the prefix is the directory above the
    interpreter's bin/, so the stand-ins sit beside the x86_64 CPython's tree."""
    prefix = x86_python.parent.parent
    return Path(os.path.normpath(prefix / ".." / "stubs"))


def read() -> Settings:
    x86_python = _path(X86_PYTHON)
    stubs = _path(X86_STUBS)
    if stubs is None and x86_python is not None:
        stubs = default_stubs(x86_python)
    return Settings(
        march=march(),
        cache=_path(CACHE),
        quantize=bool(_env.get(QUANTIZE)),
        act_scale=act_scale(),
        mlir_libs=_path(MLIR_LIBS),
        x86_python=x86_python,
        x86_emulator=_path(X86_EMULATOR),
        x86_stubs=stubs,
    )


def cache_dir(settings: Settings) -> Path:
    """The cache directory, created owner-only (0700): compiled artifacts are
    loaded and run as they are found, so nobody else may plant one there."""
    settings.cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    return settings.cache
