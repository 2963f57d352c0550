"""A plugin wheel written from its staged package folder: the wheel format
(PEP 427) by hand, since a plugin wheel holds no Python extension and needs
no build backend.

The wheel installs one package, torch_fl_plugin_<name>, holding the plugin
library (and whatever else the plugin's CMake installs beside it) and an
__init__.py whose library_path() is the torch_fl.plugins entry point
(python/torch_fl/_plugins.py)."""

from __future__ import annotations

import base64
import hashlib
import platform
import zipfile
from pathlib import Path

INIT = '''"""torch_fl plugin {name}: advertises libflagos_{name}.so to torch_fl
through the torch_fl.plugins entry point. Written by tools.plugin_wheel;
importing it loads nothing (the core loads and validates the library)."""

from pathlib import Path


def library_path() -> str:
    return str(Path(__file__).with_name("libflagos_{name}.so"))
'''


def package_name(name: str) -> str:
    return f"torch_fl_plugin_{name}"


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def write_wheel(package_dir: Path, name: str, version: str, out_dir: Path) -> Path:
    """Zips package_dir (the staged torch_fl_plugin_<name>/, which must hold
    libflagos_<name>.so) with a generated __init__.py and dist-info into
    out_dir; returns the wheel's path."""
    package = package_name(name)
    if not (package_dir / f"libflagos_{name}.so").is_file():
        raise FileNotFoundError(f"[flagos] plugin_wheel: {package_dir} holds no libflagos_{name}.so")
    tag = f"py3-none-linux_{platform.machine()}"
    dist_info = f"{package}-{version}.dist-info"
    files: list[tuple[str, bytes, int]] = []  # (name in the wheel, bytes, mode)
    for path in sorted(p for p in package_dir.rglob("*") if p.is_file() and p.name != "__init__.py"):
        files.append((f"{package}/{path.relative_to(package_dir).as_posix()}", path.read_bytes(),
                      path.stat().st_mode & 0o777))
    files.append((f"{package}/__init__.py", INIT.format(name=name).encode(), 0o644))
    meta = {
        "METADATA": f"Metadata-Version: 2.1\nName: torch_fl-plugin-{name}\nVersion: {version}\n"
                    f"Summary: The {name} plugin of torch_fl (libflagos_{name}.so)\n"
                    "License: Apache-2.0\nRequires-Python: >=3.10\n",
        "WHEEL": f"Wheel-Version: 1.0\nGenerator: tools.plugin_wheel\nRoot-Is-Purelib: false\nTag: {tag}\n",
        "entry_points.txt": f"[torch_fl.plugins]\n{name} = {package}:library_path\n",
    }
    files += [(f"{dist_info}/{k}", v.encode(), 0o644) for k, v in meta.items()]
    record = "\n".join([_record_line(n, data) for n, data, _ in files] + [f"{dist_info}/RECORD,,", ""])
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))

    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{package}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data, mode in files:
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16  # a regular file, its permissions kept
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel
