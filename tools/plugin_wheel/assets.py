"""The runtime libraries a plugin wheel bundles (docs/platforms/cuda.md,
"CUDA assets"): those its manifest lists under [assets] libraries, copied
into <name>_assets/ beside the library, where the plugin looks right after a
copy already loaded in the process.

From FLAGOS_CUDA_ASSETS_DIR when set (or its default folder,
.libtorch_cuda_assets, when that exists), else from the manifest's
wheel_folder in the building Python's site-packages (the nvidia-* wheel
torch installs). FLAGOS_SKIP_CUDA_ASSETS=1 bundles none. A library found
nowhere is one [flagos] warning: the wheel is still made, and the plugin
then finds the runtime as it would without assets.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
import tomllib
from pathlib import Path

from tools.build_config import switch_on

DEFAULT_DIR = ".libtorch_cuda_assets"


def _sources(root: Path, wheel_folder: str | None) -> list[Path]:
    given = os.environ.get("FLAGOS_CUDA_ASSETS_DIR")
    if given:
        path = Path(given)
        return [path if path.is_absolute() else root / path]
    folders = [root / DEFAULT_DIR]
    if wheel_folder:
        folders += [Path(p) / wheel_folder for p in site.getsitepackages() + [site.getusersitepackages()]]
    return folders


def bundle(package_dir: Path, name: str, root: Path) -> list[str]:
    """Copies the manifest's libraries into package_dir/<name>_assets;
    returns their names."""
    manifest = package_dir / f"libflagos_{name}.toml"
    if not manifest.is_file():
        return []
    with open(manifest, "rb") as f:
        assets = tomllib.load(f).get("assets", {})
    libraries = list(assets.get("libraries", []))
    if not libraries or switch_on("FLAGOS_SKIP_CUDA_ASSETS"):
        return []
    sources = _sources(root, assets.get("wheel_folder"))
    target = package_dir / f"{name}_assets"
    copied = []
    for lib in libraries:
        found = next((folder / lib for folder in sources if (folder / lib).is_file()), None)
        if found is None:
            print(f"[flagos] plugin_wheel {name}: {lib} is in none of {', '.join(map(str, sources))}: not "
                  f"bundled (the plugin then opens an installed one; FLAGOS_CUDA_ASSETS_DIR names a folder)",
                  file=sys.stderr)
            continue
        target.mkdir(exist_ok=True)
        shutil.copy2(found.resolve(), target / lib)
        copied.append(lib)
    return copied
