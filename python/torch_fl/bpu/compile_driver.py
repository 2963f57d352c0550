"""Compiles an ONNX model for the BPU through hbdk4 on an x86_64 CPython.

The command line is ``[emulator] x86-python _hbdk4_main.py --model ...
--march ... --quantize|--no-quantize --act-scale ... --cache ... --output ...``
and its environment is this process's, plus:

  LD_PRELOAD  the MLIR plugin libraries in FLAGOS_BPU_MLIR_LIBS (libhbtl.so
              first): hbdk4 resolves its ops through them, and under an
              emulator its own search does not find them;
  PYTHONPATH  FLAGOS_BPU_X86_STUBS alone: the stand-ins for numba and torch
              that hbdk4's ONNX entry point imports, and nothing of this
              aarch64 interpreter's path, whose extension modules the x86_64
              one cannot load.

No emulator runs on an x86_64 host. Elsewhere it is FLAGOS_BPU_X86_EMULATOR,
else box64 from PATH. Artifacts are cached under FLAGOS_BPU_CACHE by the
model's bytes and every setting that changes the output, so a repeated
compile runs nothing.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from torch_fl.bpu import settings as _settings

MAIN = Path(__file__).with_name("_hbdk4_main.py")
DEFAULT_EMULATOR = "box64"
PRELOAD_FIRST = "libhbtl.so"


@dataclass(frozen=True)
class Invocation:
    argv: list[str]
    env: dict[str, str]
    output: Path


def _fail(message: str) -> RuntimeError:
    return RuntimeError(f"[flagos] BPU compile: {message}")


def _x86_python(s: _settings.Settings) -> Path:
    if s.x86_python is None:
        raise _fail(f"no x86_64 CPython with hbdk4 (hbdk4 ships x86_64-only wheels); set "
                    f"{_settings.X86_PYTHON} to its interpreter")
    if not os.access(s.x86_python, os.X_OK):
        raise _fail(f"{_settings.X86_PYTHON}={s.x86_python} is not an executable file")
    return s.x86_python


def _emulator(s: _settings.Settings, machine: str) -> list[str]:
    if s.x86_emulator is not None:
        if not os.access(s.x86_emulator, os.X_OK):
            raise _fail(f"{_settings.X86_EMULATOR}={s.x86_emulator} is not an executable file")
        return [str(s.x86_emulator)]
    if machine in ("x86_64", "amd64"):
        return []
    found = shutil.which(DEFAULT_EMULATOR)
    if found is None:
        raise _fail(f"this host is {machine} and hbdk4 is x86_64-only; set {_settings.X86_EMULATOR} "
                    f"to an x86_64 emulator ({DEFAULT_EMULATOR} is not in PATH)")
    return [found]


def _preload(s: _settings.Settings) -> list[str]:
    if s.mlir_libs is None:
        return []
    if not s.mlir_libs.is_dir():
        raise _fail(f"{_settings.MLIR_LIBS}={s.mlir_libs} is not a directory")
    libs = sorted(s.mlir_libs.glob("*.so"), key=lambda p: (p.name != PRELOAD_FIRST, p.name))
    if not libs:
        raise _fail(f"{_settings.MLIR_LIBS}={s.mlir_libs} holds no .so library")
    return [str(p) for p in libs]


def _stubs(s: _settings.Settings) -> Path:
    if not s.x86_stubs.is_dir():
        origin = "" if os.environ.get(_settings.X86_STUBS) else f" (derived from {_settings.X86_PYTHON})"
        raise _fail(f"{_settings.X86_STUBS}={s.x86_stubs}{origin} is not a directory; hbdk4's ONNX "
                    "entry point imports numba and torch, which it must stand in for")
    return s.x86_stubs


def cache_key(model: bytes, s: _settings.Settings) -> str:
    h = hashlib.sha256(model)
    h.update(f"\0{s.march}\0{int(s.quantize)}\0{s.act_scale!r}".encode())
    return h.hexdigest()[:32]


def invocation(model: Path, s: _settings.Settings | None = None, machine: str | None = None) -> Invocation:
    """What compiling `model` runs, checked, without running it."""
    s = s or _settings.read()
    python = _x86_python(s)
    emulator = _emulator(s, machine or platform.machine())
    stubs = _stubs(s)
    preload = _preload(s)
    cache = _settings.cache_dir(s)
    output = cache / f"{cache_key(model.read_bytes(), s)}.hbm"
    argv = emulator + [str(python), str(MAIN),
                       "--model", str(model),
                       "--march", s.march,
                       "--quantize" if s.quantize else "--no-quantize",
                       "--act-scale", repr(s.act_scale),
                       "--cache", str(cache),
                       "--output", str(output)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(stubs)
    if preload:
        env["LD_PRELOAD"] = ":".join(preload + ([env["LD_PRELOAD"]] if env.get("LD_PRELOAD") else []))
    return Invocation(argv, env, output)


def compile_onnx(model: str | os.PathLike, s: _settings.Settings | None = None,
                 machine: str | None = None) -> Path:
    """The ``.hbm`` for the ONNX file `model`: from the cache, else compiled now."""
    run = invocation(Path(model).resolve(), s, machine)
    if run.output.is_file():
        return run.output
    proc = subprocess.run(run.argv, env=run.env, capture_output=True, text=True)
    if proc.returncode != 0 or not run.output.is_file():
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        why = f"exit {proc.returncode}" if proc.returncode != 0 else f"it wrote no {run.output.name}"
        raise _fail(f"hbdk4 failed ({why}): {' '.join(run.argv)}\n{tail}")
    return run.output
