"""Builds the wheel of one plugin, torch_fl-plugin-<name>: plugins/<name>
compiled on its own (tools/plugin_wheel/CMakeLists.txt: include/ and the
vendor runtime only, no torch, no core), installed as the package
torch_fl_plugin_<name>, which torch_fl finds through its torch_fl.plugins
entry point.

    python -m tools.plugin_wheel NAME [--out DIR] [--build-dir DIR] [-D VAR=VALUE ...]
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tools.build_config.wheel_version import plugin_version

from . import vendor_torch
from .assets import bundle
from .wheel_file import package_name, write_wheel

ROOT = Path(__file__).resolve().parents[2]


def build(name: str, out_dir: Path, build_dir: Path | None = None, defines: tuple[str, ...] = ()) -> Path:
    """Configures, builds and stages plugins/<name>, then writes its wheel
    into out_dir. A failing step raises CalledProcessError after CMake has
    printed why (a missing vendor runtime fails the configure). The version is
    torch_fl's with FLAGOS_WHEEL_PRERELEASE and FLAGOS_WHEEL_LOCAL applied
    (tools/build_config/wheel_version.py); a refused value raises BuildConfigError
    before anything is compiled. Runtime libraries the plugin's manifest lists
    are bundled beside it (assets.py), and so is the vendor torch that
    FLAGOS_VENDOR_TORCH_LIB names (vendor_torch.py)."""
    version = plugin_version(name)
    build_dir = build_dir or ROOT / "build" / "plugin_wheel" / name
    stage = build_dir / "stage"
    configure = ["cmake", "-S", str(ROOT / "tools" / "plugin_wheel"), "-B", str(build_dir),
                 f"-DFLAGOS_PLUGIN={name}", "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja") and not (build_dir / "Makefile").exists():
        configure += ["-G", "Ninja"]
    subprocess.run(configure + [f"-D{d}" for d in defines], check=True)
    subprocess.run(["cmake", "--build", str(build_dir)], check=True)
    shutil.rmtree(stage, ignore_errors=True)
    subprocess.run(["cmake", "--install", str(build_dir), "--prefix", str(stage), "--strip"], check=True,
                   stdout=subprocess.DEVNULL)
    bundle(stage / package_name(name), name, ROOT)
    vendor_torch.bundle(stage / package_name(name), name)
    return write_wheel(stage / package_name(name), name, version, out_dir)
