"""The FlagGems side of the `flaggems_cpp` route: FlagGems' C++ runtime
(libtriton_jit, ``liboperators.so`` and the ``c_operators`` library that
registers ``flag_gems::<op>`` in torch's dispatcher), loaded at import before
routes are installed. The core then calls those operators' kernels from C++
with no Python per call (core/routes/flaggems_cpp.h).

Where it is found: ``FLAGGEMS_DIR``, FlagGems' CMake package directory
(``<prefix>/lib/cmake/FlagGems``, FlagGemsConfig.cmake), else the installed
flag_gems package, which a C-extension build installs as that prefix. The
runtime reads its Triton kernels from ``FLAGGEMS_SOURCE_DIR`` (flag_gems'
Python package directory) at a kernel's first call, so the route needs it set,
and the same FlagGems version as the runtime was built from when the prefix
records one (``flaggems_version.txt``, written by test/gpu/flaggems_cpp.sh).

Loaded only when a route may need it, as for `flaggems`; otherwise, or when
anything is missing, routes naming `flaggems_cpp` take their next route with
one line saying why.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
from typing import Optional

from torch_fl import _build_config_reader, _routing

_status = "not loaded"
_loaded = False
VERSION_RECORD = "flaggems_version.txt"


def prefix() -> tuple[Optional[str], str]:
    """FlagGems' C++ install prefix, and where it came from (or why none)."""
    cmake_dir = os.environ.get("FLAGGEMS_DIR")
    if cmake_dir:
        if not os.path.isfile(os.path.join(cmake_dir, "FlagGemsConfig.cmake")):
            return None, f"FLAGGEMS_DIR={cmake_dir} holds no FlagGemsConfig.cmake"
        return os.path.abspath(os.path.join(cmake_dir, "..", "..", "..")), f"FLAGGEMS_DIR={cmake_dir}"
    spec = importlib.util.find_spec("flag_gems")
    if spec is None or not spec.submodule_search_locations:
        return None, "flag_gems is not installed and FLAGGEMS_DIR is not set"
    package = list(spec.submodule_search_locations)[0]
    if not os.path.isfile(os.path.join(package, "lib", "cmake", "FlagGems", "FlagGemsConfig.cmake")):
        return None, (f"the installed flag_gems ({package}) has no C++ runtime (a build without "
                      "FLAGGEMS_BUILD_C_EXTENSIONS) and FLAGGEMS_DIR is not set")
    return package, f"the installed flag_gems ({package})"


def _source_version(source: str) -> Optional[str]:
    try:
        with open(os.path.join(source, "__init__.py")) as f:
            found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
    except OSError:
        return None
    return found.group(1) if found else None


def why_not(root: str) -> str:
    """Why the runtime under `root` cannot serve this process ("" when it can)."""
    libraries = glob.glob(os.path.join(root, "c_operators*.so"))
    if not libraries:
        return f"{root} has no c_operators library (FlagGems' operator registrations)"
    source = os.environ.get("FLAGGEMS_SOURCE_DIR")
    if not source:
        return ("FLAGGEMS_SOURCE_DIR is not set: FlagGems' C++ runtime compiles its Triton kernels from "
                "that directory (flag_gems' Python package)")
    if not os.path.isfile(os.path.join(source, "ops", "mm.py")):
        return f"FLAGGEMS_SOURCE_DIR={source} is not flag_gems' Python package (no ops/mm.py)"
    record = os.path.join(root, VERSION_RECORD)
    if os.path.isfile(record):
        with open(record) as f:
            built = f.read().strip()
        here = _source_version(source)
        if here != built:
            return (f"FLAGGEMS_SOURCE_DIR={source} is flag_gems {here or '(unknown version)'}, but the C++ "
                    f"runtime under {root} was built from {built}: its kernels would not match")
    return ""


def load(force: bool = False) -> bool:
    """Loads FlagGems' C++ runtime when a route may need it (or `force`)."""
    global _status, _loaded
    if _loaded:
        return True
    why = _routing.why_not_load(
        "flaggems_cpp", _build_config_reader.kernel_switch("flaggems_cpp", "FLAGOS_BUILD_FLAGGEMS_CPP"), force)
    if why:
        _status = why
        return False
    root, origin = prefix()
    if root is None:
        _status = origin
        return False
    why = why_not(root)
    if why:
        _status = why
        return False
    import torch

    library = sorted(glob.glob(os.path.join(root, "c_operators*.so")))[0]
    try:
        torch.ops.load_library(library)
    except (OSError, RuntimeError) as exc:
        # RuntimeError: a second c_operators registering flag_gems (a flag_gems
        # of another prefix already loaded its own).
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _status = f"FlagGems' C++ runtime from {origin} does not load ({first})"
        return False
    _status, _loaded = f"FlagGems' C++ runtime from {origin}", True
    return True


def loaded() -> bool:
    return _loaded


def status() -> str:
    return _status
