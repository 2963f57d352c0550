"""What torch_fl's wheels carry in their metadata.

The version, every wheel: the base version (pyproject.toml, the version
entry of [[tool.dynamic-metadata]]), then FLAGOS_WHEEL_PRERELEASE, then
+FLAGOS_WHEEL_LOCAL (2.10.0rc1+cuda13.3). One function, compose(), makes it
for the core wheel (this module is its scikit-build-core provider:
dynamic_metadata below), for the plugin wheels (tools/plugin_wheel) and for
the build record (WHEEL_VERSION), so the three cannot disagree.

The core wheel's torch requirement: the minor it was compiled against
(core_requirements). Pure Python, torch not imported: it runs inside the
PEP 517 backend before anything is compiled.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from tools.build_config.resolve import (ROOT, BuildConfigError, load_platforms, project_version,
                                        resolve, wheel_pieces)


def compose(base: str, prerelease: str | None = None, local: str | None = None) -> str:
    """base + prerelease + "+local", checked against PEP 440 as a whole."""
    text = base + (prerelease or "")
    if local:
        text += f"+{local}"
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(text)
    except InvalidVersion:
        raise BuildConfigError(f"wheel version {text!r} (base {base!r}, FLAGOS_WHEEL_PRERELEASE="
                               f"{prerelease or ''}, FLAGOS_WHEEL_LOCAL={local or ''}) is not "
                               f"a PEP 440 version") from None
    if base + (prerelease or "") != parsed.public:
        raise BuildConfigError(f"base version {base!r} is not in PEP 440's normal form "
                               f"({Version(base)}): write it that way in pyproject.toml")
    return text


def core_version(env: Mapping[str, str] | None = None, root: Path | str = ROOT) -> str:
    """The core wheel's version: the build record's WHEEL_VERSION for this environment."""
    return resolve(env, root=root).wheel_version


def plugin_version(name: str, env: Mapping[str, str] | None = None, root: Path | str = ROOT) -> str:
    """A plugin wheel's version. The local label defaults to the platform's
    wheel_local when the plugin is one of confs/flagos_platforms.json's
    accelerators; a plugin with no entry there (host) has none unless
    FLAGOS_WHEEL_LOCAL is set."""
    env = os.environ if env is None else env
    meta = load_platforms().get(name)
    local, pre = wheel_pieces(env, name, meta, {}, [])
    return compose(project_version(root), pre, local)


def core_requirements(torch_version: str | None = None) -> list[str]:
    """The core wheel's requirements: the torch minor it is compiled against
    (its C++ libraries are not compatible across minors), from the installed
    torch's metadata; "2.13.0+cpu" gives ["torch>=2.13,<2.14"]."""
    if torch_version is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            torch_version = version("torch")
        except PackageNotFoundError:
            raise BuildConfigError("the core compiles against the installed torch, and none is installed: "
                                   "pip install torch first, then build with --no-build-isolation") from None
    from packaging.version import Version

    release = Version(torch_version).release
    return [f"torch>={release[0]}.{release[1]},<{release[0]}.{release[1] + 1}"]


def dynamic_metadata(settings: Mapping[str, Any], _project: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """scikit-build-core's hook for pyproject.toml's [[tool.dynamic-metadata]]
    entries: {"version": the core wheel's version} or {"dependencies":
    core_requirements()}. A refused variable stops the build with its one
    [flagos] line."""
    field = settings.get("field")
    if field == "version":
        return {"version": core_version()}
    if field == "dependencies":
        return {"dependencies": core_requirements()}
    raise BuildConfigError(f"tools.build_config.wheel_version provides the version and the dependencies, "
                           f"not {field!r}")
