"""A vendor torch's libraries bundled into its plugin wheel (lib_<vendor>/),
for a vendor whose device kernels live in a torch of its own build
(docs/platforms/ppu.md and dcu.md, "A bundled vendor torch").

The plugin's manifest says what to take ([vendor_torch] in
libflagos_<vendor>.toml): its device libraries; its core libraries (libc10,
libtorch_cpu, ...) always or when a variable is on (FLAGOS_DCU_VENDOR_CORE);
and the folder that supplies the libraries they link by a name prefix
(PPU's MKL, FLAGOS_PPU_MKL_DIR). FLAGOS_VENDOR_TORCH_LIB names the vendor
torch's lib folder at build; unset, nothing is bundled and the plugin runs
with the torch installed beside it.

The bundle's bundle.json records the layout ("core": the vendor's core
replaces the installed torch's; "device": device libraries on the installed
torch's core), the vendor torch's version, and the load order, which
torch_fl's start-up hook follows before torch imports (python/_torch_fl_bundle.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

from tools.build_config import switch_on

from .elf_needed import needed

# The libraries of torch's own core, by the names torch's wheel ships them under.
CORE = ("libc10.so", "libtorch.so", "libtorch_cpu.so", "libtorch_global_deps.so", "libtorch_python.so",
        "libshm.so")


class BundleError(FileNotFoundError):
    """A bundle cannot be made as asked; the message is one [flagos] line."""


def _torch_versions(lib: Path) -> dict[str, str | None]:
    """__version__ and hip from the vendor torch's version.py, beside its lib folder."""
    try:
        text = (lib.parent / "version.py").read_text()
    except OSError:
        return {"torch_version": None, "hip": None}
    found = {}
    for key, name in (("torch_version", "__version__"), ("hip", "hip")):
        m = re.search(rf"^{name}\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        found[key] = m.group(1) if m else None
    return found


def _spec(package_dir: Path, name: str) -> dict | None:
    manifest = package_dir / f"libflagos_{name}.toml"
    if not manifest.is_file():
        return None
    with open(manifest, "rb") as f:
        return tomllib.load(f).get("vendor_torch")


def _load_order(names: list[str], deps: dict[str, list[str]]) -> list[str]:
    """Each library after the bundled ones it needs."""
    order: list[str] = []

    def visit(n: str, path: tuple[str, ...]) -> None:
        if n in order or n in path:
            return
        for d in deps[n]:
            visit(d, path + (n,))
        order.append(n)

    for n in names:
        visit(n, ())
    return order


def bundle(package_dir: Path, name: str) -> dict | None:
    """Copies the vendor torch's libraries into package_dir/<folder> and
    writes its bundle.json; returns that record, or None when the plugin
    bundles no vendor torch or FLAGOS_VENDOR_TORCH_LIB is unset. Raises
    BundleError naming the library and the folder or variable at fault."""
    spec = _spec(package_dir, name)
    if not spec:
        return None
    given = os.environ.get("FLAGOS_VENDOR_TORCH_LIB", "").strip()
    folder = spec["folder"]
    if not given:
        print(f"[flagos] plugin_wheel {name}: FLAGOS_VENDOR_TORCH_LIB is unset: no {folder}/ bundle; the plugin "
              f"runs with the torch installed beside it", file=sys.stderr)
        return None
    source = Path(given)
    if not source.is_dir():
        raise BundleError(f"[flagos] plugin_wheel {name}: FLAGOS_VENDOR_TORCH_LIB={given} is not a folder")
    core_switch = spec.get("core", "always")
    with_core = core_switch == "always" or switch_on(core_switch)
    device = [n for n in spec["device"] if (source / n).is_file()]
    if not device:
        raise BundleError(f"[flagos] plugin_wheel {name}: FLAGOS_VENDOR_TORCH_LIB={given} holds none of "
                          f"{', '.join(spec['device'])}: not {name}'s torch")
    take = device + ([n for n in CORE if (source / n).is_file()] if with_core else [])
    dep_var = spec.get("dependency_variable")
    dep_dir = Path(os.environ.get(dep_var) or spec["dependency_default"]) if dep_var else None
    prefixes = tuple(spec.get("dependency_prefixes", ()))
    origin = {n: source / n for n in take}
    deps: dict[str, list[str]] = {}
    from_torch: set[str] = set()  # core libraries the device ones take from the installed torch
    queue = list(take)
    while queue:
        lib = queue.pop()
        deps[lib] = []
        for dep in needed(origin[lib]):
            if dep in CORE and not with_core:
                from_torch.add(dep)
                continue
            if dep not in origin:
                if (source / dep).is_file():
                    origin[dep] = source / dep
                elif prefixes and dep.startswith(prefixes):
                    if not (dep_dir / dep).is_file():
                        raise BundleError(f"[flagos] plugin_wheel {name}: {lib} needs {dep}, which is not in "
                                          f"{dep_var}={dep_dir}")
                    origin[dep] = dep_dir / dep
                else:
                    continue  # the system's or the vendor runtime's, found on the target machine
                queue.append(dep)
            deps[lib].append(dep)
    target = package_dir / folder
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for lib, path in origin.items():
        shutil.copy2(path.resolve(), target / lib)
    record = {
        "vendor": name,
        "layout": "core" if with_core else "device",
        "core_variable": None if core_switch == "always" else core_switch,
        "check_variable": spec.get("skip_check_variable"),
        **_torch_versions(source),
        "libraries": _load_order(sorted(origin), deps),
        "from_installed_torch": sorted(from_torch),
        "sources": {"FLAGOS_VENDOR_TORCH_LIB": str(source), **({dep_var: str(dep_dir)} if dep_var else {})},
    }
    (target / "bundle.json").write_text(json.dumps(record, indent=1) + "\n")
    return record

