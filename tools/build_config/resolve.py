"""Resolves the build configuration: the Build-scope variables of
docs/environment-variables.md (table "Build switches" and the paragraph after
it) against the per-accelerator metadata in confs/flagos_platforms.json.

Pure Python on purpose: CMake runs it at configure time, before anything is
built, and the tests call it directly. It imports neither torch nor torch_fl.

The rules, all from the spec:
  * FLAGOS_ACCELERATOR: cuda by default; anything outside ACCELERATORS is
    refused with an error listing the valid ones (matching ignores case).
  * The six FLAGOS_BUILD_* switches: five kernel sets (bools) plus
    FLAGOS_BUILD_JOBS. A bool takes its explicit value, else the platform's
    default; a forced value contradicted by an explicit one is an error naming
    both. FLAGOS_BUILD_JOBS falls back to MAX_JOBS, then
    CMAKE_BUILD_PARALLEL_LEVEL, then the CPU count.
  * Booleans: 1/true/on/yes and 0/false/off/no in any case; empty is unset
    (the default, not "off"); anything else is one [flagos] warning and the
    default. Integers must parse completely and be positive.
  * FLAGOS_WHEEL_LOCAL defaults to the platform's wheel_local;
    FLAGOS_WHEEL_PRERELEASE accepts only a PEP 440 pre-release segment.
  * FLAGOS_CUDA_ASSETS_DIR: a missing directory named explicitly, where
    assets would be bundled (cuda, FLAGOS_SKIP_CUDA_ASSETS off), is one
    [flagos] warning.

Every refusal is one BuildConfigError whose message starts with "[flagos]";
every warning is one "[flagos]" line collected in Resolved.warnings.
"""

from __future__ import annotations

import json
import os
import sys
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS_JSON = ROOT / "confs" / "flagos_platforms.json"

ACCELERATORS = ("cuda", "ppu", "metax", "ascend", "tsingmicro", "dcu", "gcu", "musa", "bpu")
DEFAULT_ACCELERATOR = "cuda"

# The five kernel-set switches, with their short names in the record (KERNELS).
KERNEL_SWITCHES = {
    "FLAGOS_BUILD_VENDOR": "vendor",
    "FLAGOS_BUILD_FLAGGEMS": "flaggems",
    "FLAGOS_BUILD_BOXING": "boxing",
    "FLAGOS_BUILD_FLAGGEMS_CPP": "flaggems_cpp",
    "FLAGOS_BUILD_TILEOPS": "tileops",
}
# The spec's "six FLAGOS_BUILD_* switches": the kernel sets and the job count.
BUILD_SWITCHES = (*KERNEL_SWITCHES, "FLAGOS_BUILD_JOBS")
JOBS_FALLBACKS = ("MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL")  # lower priority, in order

# Every Build-scope name this module reads (test_build_config checks it
# against the registry's Build and Build & Runtime variables).
READS = ("FLAGOS_ACCELERATOR", *BUILD_SWITCHES, "FLAGOS_WHEEL_LOCAL", "FLAGOS_WHEEL_PRERELEASE",
         "FLAGOS_SKIP_CUDA_ASSETS", "FLAGOS_CUDA_ASSETS_DIR", "FLAGOS_PPU_MKL_DIR",
         "FLAGOS_DCU_VENDOR_CORE")

TRUE = ("1", "true", "on", "yes")
FALSE = ("0", "false", "off", "no")

# PEP 440, "Pre-releases": the canonical pre-release segment is a, b or rc
# followed by a non-negative integer with no leading zeros (rc1, a1, b2, rc10).
PRERELEASE_RE = re.compile(r"(a|b|rc)(0|[1-9][0-9]*)")
# PEP 440, "Local version identifiers": ASCII letters and digits, separated by periods.
LOCAL_RE = re.compile(r"[A-Za-z0-9]+(\.[A-Za-z0-9]+)*")

DEFAULT_CUDA_ASSETS_DIR = ".libtorch_cuda_assets"
DEFAULT_PPU_MKL_DIR = "/usr/local/lib"


class BuildConfigError(ValueError):
    """An invalid build configuration. str() is the one [flagos] line to print."""

    def __init__(self, message: str):
        super().__init__(f"[flagos] {message}")


@dataclass
class Resolved:
    """What a build uses, and is recorded as torch_fl/_build_config.py."""

    accelerator: str
    kernels: dict[str, bool]  # short name -> compiled in
    sources: dict[str, str]  # variable -> environment, cmake, forced, default, fallback name, cpu count
    jobs: int
    version: str  # torch_fl's own (project) version
    wheel_local: str | None
    wheel_prerelease: str | None
    skip_cuda_assets: bool
    cuda_assets_dir: str
    ppu_mkl_dir: str
    dcu_vendor_core: bool
    versions: dict[str, str | None]
    warnings: list[str] = field(default_factory=list)

    @property
    def wheel_version(self) -> str:
        """The version a wheel of this build carries: 2.10.0rc1+cuda13.3."""
        from tools.build_config.wheel_version import compose  # it imports this module
        return compose(self.version, self.wheel_prerelease, self.wheel_local)

    def switches(self) -> dict[str, bool]:
        return {name: self.kernels[short] for name, short in KERNEL_SWITCHES.items()}

    def record(self) -> dict[str, Any]:
        """The build record, as the names _build_config.py defines."""
        return {
            "ACCELERATOR": self.accelerator,
            "KERNELS": dict(self.kernels),
            "JOBS": self.jobs,
            "VERSION": self.version,
            "WHEEL_VERSION": self.wheel_version,
            "WHEEL_LOCAL": self.wheel_local,
            "WHEEL_PRERELEASE": self.wheel_prerelease,
            "SKIP_CUDA_ASSETS": self.skip_cuda_assets,
            "CUDA_ASSETS_DIR": self.cuda_assets_dir,
            "PPU_MKL_DIR": self.ppu_mkl_dir,
            "DCU_VENDOR_CORE": self.dcu_vendor_core,
            "VERSIONS": dict(self.versions),
            "SOURCES": dict(self.sources),
            "BACKEND_CONFIGS": self.backend_configs(),
        }

    def backend_configs(self) -> dict[str, str]:
        """Default routing conf per platform (file names under torch_fl/confs).
        A cuda build without boxing kernels is FlagGems-primary (the spec's
        FLAGOS_BUILD_BOXING note); every other platform has one conf."""
        confs = {"host": "host.toml"}
        for acc in ACCELERATORS:
            confs[acc] = f"{acc}.toml"
        if not self.kernels["boxing"]:
            confs["cuda"] = "cuda_flaggems.toml"
        return confs

    def to_module(self) -> str:
        lines = [
            '"""The build record: what this torch_fl build was configured with.',
            "",
            "Generated at configure time by `python -m tools.build_config write`;",
            "never edit it and never commit it. torch_fl.build_config() reads it, and",
            'no run-time reader consults the FLAGOS_* build variables instead."""',
            "",
        ]
        for name, value in self.record().items():
            lines.append(f"{name} = {value!r}")
        return "\n".join(lines) + "\n"

    def to_cmake(self) -> str:
        """The resolved switches as CMake (normal, non-cache) variables."""
        out = ["# Generated by tools/build_config at configure time; do not edit.",
               f'set(FLAGOS_ACCELERATOR "{self.accelerator}")']
        out += [f"set({name} {'ON' if on else 'OFF'})" for name, on in self.switches().items()]
        out += [f"set(FLAGOS_BUILD_JOBS {self.jobs})",
                f'set(FLAGOS_WHEEL_VERSION "{self.wheel_version}")']
        return "\n".join(out) + "\n"


def load_platforms(path: Path | str = PLATFORMS_JSON) -> dict[str, dict]:
    data = json.loads(Path(path).read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def _value(env: Mapping[str, str], name: str) -> str | None:
    """The explicit value, or None: empty means unset."""
    value = env.get(name)
    return None if value is None or value == "" else value


def parse_bool(name: str, text: str, warnings: list[str]) -> bool | None:
    """True/False, or None (after one warning) when `text` is not a boolean."""
    low = text.strip().lower()
    if low in TRUE:
        return True
    if low in FALSE:
        return False
    warnings.append(f"[flagos] {name}={text!r} is not a boolean (1/true/on/yes or "
                    f"0/false/off/no); using the default")
    return None


def switch_on(name: str) -> bool:
    """A boolean variable of the environment, off when unset; a value that is
    not a boolean is off after its one [flagos] line on stderr."""
    warnings: list[str] = []
    on = parse_bool(name, os.environ.get(name, "0"), warnings)
    for line in warnings:
        print(line, file=sys.stderr)
    return bool(on)


def _parse_jobs(name: str, text: str, warnings: list[str]) -> int | None:
    t = text.strip()
    if re.fullmatch(r"[0-9]+", t) and int(t) > 0:
        return int(t)
    warnings.append(f"[flagos] {name}={text!r} is not a positive integer; ignoring it")
    return None


def _onoff(value: bool) -> str:
    return "ON" if value else "OFF"


def resolve(env: Mapping[str, str] | None = None, *, defines: Mapping[str, str] | None = None,
            platforms: Mapping[str, dict] | None = None, version: str | None = None,
            root: Path | str = ROOT, cpu_count: int | None = None) -> Resolved:
    """Resolves the build configuration from `env` (default os.environ).

    `defines` are the same names given to CMake as -D cache values; a define
    and an environment value that disagree are refused (neither silently wins).
    Raises BuildConfigError for anything the spec refuses."""
    env = os.environ if env is None else env
    defines = defines or {}
    platforms = load_platforms() if platforms is None else platforms
    root = Path(root)
    warnings: list[str] = []
    sources: dict[str, str] = {}

    def explicit(name: str, same=lambda a, b: a == b) -> tuple[str | None, str]:
        """(value, where it came from) for a name that the environment or a -D may set."""
        e, d = _value(env, name), _value(defines, name)
        if e is not None and d is not None and not same(e, d):
            raise BuildConfigError(f"{name}={e} in the environment contradicts "
                                   f"-D{name}={d} given to CMake; set it in one place")
        if e is not None:
            return e, "environment"
        if d is not None:
            return d, "cmake"
        return None, "default"

    # Accelerator.
    text, origin = explicit("FLAGOS_ACCELERATOR", lambda a, b: a.strip().lower() == b.strip().lower())
    if text is None:
        accelerator = DEFAULT_ACCELERATOR
    else:
        accelerator = text.strip().lower()
        if accelerator not in ACCELERATORS:
            raise BuildConfigError(f"FLAGOS_ACCELERATOR={text} is not a known accelerator; "
                                   f"valid values: {', '.join(ACCELERATORS)}")
    sources["FLAGOS_ACCELERATOR"] = origin
    if accelerator not in platforms:
        raise BuildConfigError(f"confs/flagos_platforms.json has no entry for accelerator {accelerator}")
    meta = platforms[accelerator]

    # The five kernel sets: explicit value, else the forced value, else the default.
    def bool_same(a: str, b: str) -> bool:
        pa, pb = parse_bool("", a, []), parse_bool("", b, [])
        return pa is not None and pa == pb or (pa is None and a == b)

    kernels: dict[str, bool] = {}
    for name, short in KERNEL_SWITCHES.items():
        forced = meta.get("forced", {}).get(name)
        text, origin = explicit(name, bool_same)
        value = None if text is None else parse_bool(name, text, warnings)
        if value is not None and forced is not None and value != forced:
            raise BuildConfigError(
                f"{name}={text} contradicts the value forced for FLAGOS_ACCELERATOR={accelerator}: "
                f"{name} is pinned {_onoff(forced)} on {accelerator} "
                f"(confs/flagos_platforms.json); unset {name} or set it {_onoff(forced)}")
        if value is None:
            value = forced if forced is not None else bool(meta["defaults"][name])
            origin = "forced" if forced is not None else "default"
        kernels[short] = value
        sources[name] = origin

    # Jobs: FLAGOS_BUILD_JOBS, then MAX_JOBS, then CMAKE_BUILD_PARALLEL_LEVEL, then the CPUs.
    jobs = None
    for name in ("FLAGOS_BUILD_JOBS", *JOBS_FALLBACKS):
        text = _value(env, name)
        if text is not None:
            jobs = _parse_jobs(name, text, warnings)
            if jobs is not None:
                sources["FLAGOS_BUILD_JOBS"] = "environment" if name == "FLAGOS_BUILD_JOBS" else name
                break
    if jobs is None:
        jobs = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
        sources["FLAGOS_BUILD_JOBS"] = "cpu count"

    # Wheel version pieces.
    local, pre = wheel_pieces(env, accelerator, meta, sources, warnings)

    # Bundling inputs.
    def flag(name: str, default: bool) -> bool:
        text = _value(env, name)
        value = None if text is None else parse_bool(name, text, warnings)
        sources[name] = "default" if value is None else "environment"
        return default if value is None else value

    skip_assets = flag("FLAGOS_SKIP_CUDA_ASSETS", False)
    assets_dir = _value(env, "FLAGOS_CUDA_ASSETS_DIR")
    sources["FLAGOS_CUDA_ASSETS_DIR"] = "default" if assets_dir is None else "environment"
    assets_dir = assets_dir or DEFAULT_CUDA_ASSETS_DIR
    assets_path = Path(assets_dir) if Path(assets_dir).is_absolute() else root / assets_dir
    # The default folder is optional (the plugin wheel then takes the nvidia
    # wheel's libraries); one named explicitly must exist.
    given = sources["FLAGOS_CUDA_ASSETS_DIR"] == "environment"
    if accelerator == "cuda" and not skip_assets and given and not assets_path.is_dir():
        warnings.append(f"[flagos] FLAGOS_CUDA_ASSETS_DIR {assets_path} does not exist: no CUDA runtime "
                        f"library is bundled from it, so the plugin opens an installed one")
    mkl_dir = _value(env, "FLAGOS_PPU_MKL_DIR")
    sources["FLAGOS_PPU_MKL_DIR"] = "default" if mkl_dir is None else "environment"
    dcu_core = flag("FLAGOS_DCU_VENDOR_CORE", False)

    version = version or project_version(root)
    found = versions(version, root)
    outside = torch_outside_support(found["torch"], root)
    if outside:
        warnings.append(outside)
    return Resolved(
        accelerator=accelerator, kernels=kernels, sources=sources, jobs=jobs, version=version,
        wheel_local=local, wheel_prerelease=pre, skip_cuda_assets=skip_assets,
        cuda_assets_dir=str(assets_path), ppu_mkl_dir=mkl_dir or DEFAULT_PPU_MKL_DIR,
        dcu_vendor_core=dcu_core, versions=found, warnings=warnings)


def wheel_pieces(env: Mapping[str, str], accelerator: str, meta: Mapping[str, Any] | None,
                 sources: dict[str, str], warnings: list[str]) -> tuple[str | None, str | None]:
    """(local label, pre-release suffix) from FLAGOS_WHEEL_LOCAL (default: the
    platform's wheel_local; `meta` None means a plugin with no platform entry,
    which has no default label) and FLAGOS_WHEEL_PRERELEASE, both validated."""
    local = _value(env, "FLAGOS_WHEEL_LOCAL")
    if local is not None:
        if not LOCAL_RE.fullmatch(local):
            raise BuildConfigError(f"FLAGOS_WHEEL_LOCAL={local} is not a PEP 440 local version label "
                                   f"(letters and digits separated by periods, e.g. cuda13.3)")
        sources["FLAGOS_WHEEL_LOCAL"] = "environment"
    else:
        local = meta.get("wheel_local") if meta is not None else None
        sources["FLAGOS_WHEEL_LOCAL"] = "default"
        if local is None and meta is not None:
            warnings.append(f"[flagos] confs/flagos_platforms.json gives {accelerator} no wheel_local "
                            f"and FLAGOS_WHEEL_LOCAL is unset: this build's version has no local label")
    pre = _value(env, "FLAGOS_WHEEL_PRERELEASE")
    if pre is not None and not PRERELEASE_RE.fullmatch(pre):
        raise BuildConfigError(f"FLAGOS_WHEEL_PRERELEASE={pre} is not a PEP 440 pre-release suffix; "
                               f"use a<N>, b<N> or rc<N> (a1, b2, rc1)")
    sources["FLAGOS_WHEEL_PRERELEASE"] = "default" if pre is None else "environment"
    return local, pre


def _pyproject(root: Path | str) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10: scikit-build-core brings tomli
        import tomli as tomllib
    return tomllib.loads((Path(root) / "pyproject.toml").read_text())


def project_version(root: Path | str = ROOT) -> str:
    """torch_fl's base version: the base of pyproject.toml's version entry in
    [[tool.dynamic-metadata]], which tools/build_config/wheel_version.py suffixes."""
    for entry in _pyproject(root).get("tool", {}).get("dynamic-metadata", []):
        if entry.get("field") == "version" and "base" in entry:
            return entry["base"]
    raise BuildConfigError("pyproject.toml has no [[tool.dynamic-metadata]] entry with "
                           "field = \"version\" and a base version")


def torch_requirement(root: Path | str = ROOT) -> str:
    """The torch versions torch_fl supports (">=2.11,<2.14"): supported-torch
    of pyproject.toml's dependencies entry in [[tool.dynamic-metadata]]."""
    for entry in _pyproject(root).get("tool", {}).get("dynamic-metadata", []):
        if entry.get("field") == "dependencies" and "supported-torch" in entry:
            return entry["supported-torch"].replace(" ", "")
    raise BuildConfigError("pyproject.toml has no [[tool.dynamic-metadata]] entry with "
                           "field = \"dependencies\" and supported-torch")


def torch_outside_support(torch_version: str | None, root: Path | str = ROOT) -> str | None:
    """The one [flagos] line saying that `torch_version` is outside the range
    the wheel declares, or None (inside it, or no torch installed)."""
    if torch_version is None:
        return None
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    wanted = torch_requirement(root)
    # The local label (+cpu, +cu130) says nothing about the API the core compiles against.
    if Version(Version(torch_version).public) in SpecifierSet(wanted, prereleases=True):
        return None
    return (f"[flagos] torch {torch_version} is outside the versions torch_fl supports "
            f"(torch{wanted}, pyproject.toml): the core may not build or may misbehave")


def versions(version: str, root: Path | str = ROOT) -> dict[str, str | None]:
    """torch_fl, the plugin ABI (include/flagos/abi.h), the torch the build ran
    against (from its metadata, without importing it) and Python."""
    abi = None
    header = Path(root) / "include" / "flagos" / "abi.h"
    if header.exists():
        text = header.read_text()
        major = re.search(r"#define FLAGOS_ABI_MAJOR (\d+)", text)
        minor = re.search(r"#define FLAGOS_ABI_MINOR (\d+)", text)
        if major and minor:
            abi = f"{major.group(1)}.{minor.group(1)}"
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        try:
            torch = dist_version("torch")
        except PackageNotFoundError:
            torch = None
    except ImportError:  # pragma: no cover
        torch = None
    return {"torch_fl": version, "abi": abi, "torch": torch, "python": platform.python_version()}
