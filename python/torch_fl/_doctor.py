"""``python -m torch_fl doctor``: what is installed and what this process
would do, as a short report (or JSON), with the problems found in it.

Each section asks the module that owns the answer (the core, the build
record, _env, _routing, compile); nothing here re-derives a rule. The
environment is read before the import steps run, since they fill some of
the names other projects own (GEMS_VENDOR, TORCHINDUCTOR_*). A failing
import step is a finding, not a crash: the report still covers the rest.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
from pathlib import Path
from importlib import metadata

import torch

import torch_fl
from torch_fl import _C, _env, _flaggems, _flaggems_cpp, _plugins, _routing, _stderr_lines, _vendor_torch, tileops
from torch_fl.compile import _environment as _compile_env

ERROR, WARNING = "error", "warning"

# (label, top-level module): looked up, never imported.
COMPANIONS = (("FlagGems", "flag_gems"), ("Triton", "triton"), ("TileOps", "tileops"),
              ("FlagCX", "flagcx"), ("transformers", "transformers"))

# Route "why" prefixes of an operator an environment variable moved.
FORCED_BY = ("FLAGOS_OP_", "FLAGOS_FORCE_BACKEND")


def _finding(findings: list, level: str, message: str, name: str | None = None) -> None:
    """``name``: the environment variable the finding is about, if any."""
    message = message[len("[flagos] "):] if message.startswith("[flagos] ") else message
    findings.append({"level": level, "message": message, **({"name": name} if name else {})})


def _versions(findings: list) -> dict:
    record = torch_fl.build_config()
    built_torch = record.get("VERSIONS", {}).get("torch")
    if built_torch and built_torch != torch.__version__:
        _finding(findings, WARNING, f"torch_fl was built against torch {built_torch}, "
                                    f"this is torch {torch.__version__}")
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,  # None on a CPU build of torch
        "torch_fl": torch_fl.__version__,
        "abi": torch_fl.ABI_VERSION,
        "build": {
            "accelerator": record.get("ACCELERATOR"),
            "kernels": [k for k, on in record.get("KERNELS", {}).items() if on],
            "wheel_version": record.get("WHEEL_VERSION"),
            "torch": built_torch,
        },
    }


def _known_as(name: str) -> str | None:
    """How the registry knows a FLAGOS_* name (None: it does not)."""
    if name in _env.VARIABLES:
        return _env.VARIABLES[name].scope
    family = _env.family_of(name)
    if family:
        return family.prefix + family.placeholder
    if name in _env.RETIRED:
        return "retired (inert)"
    return None


def _environment(findings: list) -> dict:
    """Every set FLAGOS_* name, and the set names other projects own; the
    problems the import-time scan found (read from it, not re-parsed) are
    findings, which gather() lists under their variable."""
    for f in _env.check_environment():
        _finding(findings, ERROR, f.message, f.name)
    owned = [{"name": n, "value": os.environ[n], "known_as": _known_as(n), "problems": []}
             for n in sorted(os.environ) if n.startswith(_env.PREFIX)]
    foreign = [{"name": n, "value": os.environ[n], "owner": f.owner}
               for n, f in sorted(_env.FOREIGN.items()) if n in os.environ]
    return {"flagos": owned, "foreign": foreign}


def _try_initialize() -> Exception | None:
    try:
        torch_fl._initialize()
    except Exception as exc:  # reported as a finding; the rest of the report still runs
        return exc
    return None


def _import_steps(findings: list) -> list[str]:
    """Runs import steps 3-6 as ``import torch_fl`` would; returns the lines they
    printed. A bad FLAGOS_OP_<op> value is only parsed here, when routes install."""
    failure, lines = _stderr_lines.captured(_try_initialize)
    notes = [line[len("[flagos] "):] for line in lines if line.startswith("[flagos] ")]
    # FLAGOS_LOG's own lines ("plugin: ...") are what the user asked to see, not problems.
    logs = tuple(f"{category}: " for category in _env.VARIABLES["FLAGOS_LOG"].choices)
    for note in (n for n in notes if not n.startswith(logs)):
        name = note.split("=", 1)[0] if "=" in note.split(" ", 1)[0] else ""
        bad_value = bool(name) and _env.family_of(name) is not None
        _finding(findings, ERROR if bad_value else WARNING, note, name if bad_value else None)
    if failure is not None:
        _finding(findings, ERROR, str(failure))
    return notes


def _active_plugin() -> dict | None:
    info = _C.active_plugin()
    if info is None:
        return None
    active = {k: info.get(k) for k in ("name", "origin", "path", "version", "abi", "device_count",
                                       "device_note", "selection", "options")}
    active["capabilities"] = None
    # The plugin's native kernels (out= overloads) and their operator caches.
    active["native_kernels"] = sorted(s.split("(")[0] for s in _C._plugin_kernel_schemas())
    active["op_cache"] = torch_fl.op_cache_stats()
    active["vendor_torch"] = _vendor_torch_state()
    if info["device_count"] > 0:
        try:  # device 0 speaks for all: a plugin reports one kind of device
            active["capabilities"] = list(_C._device_properties(0)["capabilities"])
        except Exception as exc:
            active["capabilities"] = f"unknown ({exc})"
    return active


def _vendor_torch_state() -> dict | None:
    """The vendor torch bundle the start-up hook acted on (_torch_fl_bundle), if any."""
    h = _vendor_torch.hook()
    if h is None or h.path is None:
        return None
    return {"bundle": str(h.path.parent), "vendor": h.record.get("vendor"), "layout": h.record.get("layout"),
            "torch_version": h.record.get("torch_version"), "loaded": [Path(p).name for p in h.loaded],
            "error": h.error}


def _plugins_section(findings: list) -> dict:
    notes = _import_steps(findings)
    installed = [{"name": c["name"], "origin": c["origin"], "path": c["path"], "state": _plugins.state(c)}
                 for c in torch_fl.installed_plugins()]
    return {"installed": installed, "active": _active_plugin(), "import_notes": notes}


def _distribution_version(module: str, owners: dict[str, list[str]]) -> str | None:
    for dist in owners.get(module, ()):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _companions() -> dict:
    """The optional packages torch_fl works with: importable, and their version
    from the installed metadata (importing Triton or FlagGems costs seconds)."""
    owners = metadata.packages_distributions()
    out = {}
    for label, module in COMPANIONS:
        found = importlib.util.find_spec(module) is not None
        out[label] = {"module": module, "importable": found, "version": _distribution_version(module, owners)}
    triton = out["Triton"]
    triton["flagtree"] = triton["importable"] and _compile_env.is_flagtree(
        _compile_env.triton_distributions(), triton["version"] or "")
    out["FlagGems"]["route"] = _flaggems.status()
    out["FlagGems"]["cpp_route"] = _flaggems_cpp.status()
    out["TileOps"]["route"] = tileops.status()
    return out


def _routing_section() -> dict:
    out: dict = {"conf": None, "default": _routing.default_route(), "counts": {}, "forced": [],
                 "force_backend": _env.get("FLAGOS_FORCE_BACKEND"), "installed": _C._routes() is not None}
    if _C.active_plugin() is None and not _env.get("FLAGOS_BACKEND_CONFIG"):
        out["conf"] = "unknown: the default conf is the active plugin's"
        return out
    try:
        out["conf"] = torch_fl.backend_config_path()
    except RuntimeError as exc:  # a relative FLAGOS_BACKEND_CONFIG: the import steps reported it
        out["conf"] = f"unusable ({exc})"
    if out["installed"]:
        rows = torch_fl.routes()
        out["counts"] = _routing.route_counts(rows)
        out["forced"] = [r for r in rows if r["why"].startswith(FORCED_BY)]
    return out


def _device_sections() -> tuple[dict, dict]:
    """torch.compile's codegen path and the collectives extension: both are
    facts of the active plugin, unknown without one."""
    info = _C.active_plugin()
    if info is None or info["device_count"] == 0:
        why = "no active plugin" if info is None else "the active plugin has no device"
        return {"codegen": None, "why": why}, {"collectives": None, "why": why}
    from torch_fl.compile import _capability

    return ({"codegen": torch_fl.compile.codegen(0), "why": _capability.describe(0)},
            {"collectives": _C.has_collectives(), "why": "the plugin's FLAGOS_EXTENSION_COLLECTIVES"})


def gather() -> dict:
    findings: list = []
    environment = _environment(findings)  # before the import steps fill foreign names
    report = {"versions": _versions(findings), "plugins": _plugins_section(findings)}
    compile_, distributed = _device_sections()
    report.update(companions=_companions(), routing=_routing_section(), environment=environment,
                  compile=compile_, distributed=distributed, findings=findings)
    for variable in environment["flagos"]:
        variable["problems"] = [f["message"] for f in findings if f.get("name") == variable["name"]]
    return report


def _plugin_lines(section: dict) -> list[tuple[str, str]]:
    rows = [("plugins", f"{p['name']} ({p['origin']}): {p['state']}") for p in section["installed"]]
    active = section["active"]
    if active is None:
        return rows + [("active", "none: no plugin activated (see findings)")]
    count = active["device_count"]
    rows.append(("active", f"{active['name']} ({active['origin']}, {count} device{'' if count == 1 else 's'}"
                           + (f": {active['device_note']}" if active["device_note"] else "") + ")"))
    rows.append(("selected", active["selection"] or "?"))
    caps = active["capabilities"]
    rows.append(("capabilities", ", ".join(caps) if isinstance(caps, list) else str(caps or "none")))
    kernels = active["native_kernels"]
    text = f"{len(kernels)}: {', '.join(k.removeprefix('aten::') for k in kernels)}" if kernels else "none"
    if active["op_cache"]:
        text += f"; {len(active['op_cache'])} keep an operator cache (FLAGOS_LOG=op_cache)"
    rows.append(("native", text))
    bundle = active["vendor_torch"]
    if bundle:
        state = bundle["error"] or (f"loaded before torch: {', '.join(bundle['loaded'])} ({bundle['layout']} "
                                    f"layout, {bundle['vendor']}'s torch {bundle['torch_version']})")
        rows.append(("vendor torch", f"{bundle['bundle']}: {state}"))
    return rows


def _companion_text(label: str, c: dict) -> str:
    route = f"; its route: {c['route']}" if "route" in c else ""
    if "cpp_route" in c:
        route += f"; its C++ route: {c['cpp_route']}"
    if not c["importable"]:
        return f"{label}: not installed{route}"
    text = f"{label} {c['version'] or '(version unknown)'}"
    return text + (" (FlagTree)" if c.get("flagtree") else "") + route


def _routing_lines(r: dict) -> list[tuple[str, str]]:
    rows = [("conf", r["conf"] or "none")]
    if not r["installed"]:
        return rows + [("routes", "not installed (see findings)")]
    counts = ", ".join(f"{k} {v}" for k, v in r["counts"].items()) or "no listed operator"
    rows.append(("routes", f"{counts}; unlisted ops: {r['default'].get('route')}"))
    forced = [f"{f['op']} -> {f['route']} ({f['why'].split(' ', 1)[0]})" for f in r["forced"]]
    shown = forced[:5] + ([f"... {len(forced) - 5} more"] if len(forced) > 5 else [])
    rows.append(("forced", "; ".join(shown) or "none (FLAGOS_OP_<op>, FLAGOS_FORCE_BACKEND unset)"))
    return rows


def _environment_lines(e: dict) -> list[tuple[str, str]]:
    rows = []
    for v in e["flagos"]:
        state = "; ".join(v["problems"]) if v["problems"] else "ok"
        rows.append(("environment", f"{v['name']}={_env_value(v['value'])} [{v['known_as'] or 'unknown'}] {state}"))
    rows += [("foreign", f"{f['name']}={_env_value(f['value'])} [{f['owner']}]") for f in e["foreign"]]
    return rows or [("environment", "no FLAGOS_* variable and no foreign name the registry lists is set")]


def _env_value(value: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in value)


def render(report: dict) -> str:
    v, b = report["versions"], report["versions"]["build"]
    rows = [("versions", f"Python {v['python']}, torch {v['torch']} "
                         f"({'CUDA ' + v['torch_cuda'] if v['torch_cuda'] else 'CPU'} build), "
                         f"torch_fl {v['torch_fl']} (ABI {v['abi']})"),
            ("build", f"{b['accelerator']}, kernels {', '.join(b['kernels']) or 'none'}; "
                      f"wheel {b['wheel_version']}, built against torch {b['torch']}")]
    rows += _plugin_lines(report["plugins"])
    rows += [("companions", _companion_text(k, c)) for k, c in report["companions"].items()]
    rows += _routing_lines(report["routing"]) + _environment_lines(report["environment"])
    c, d = report["compile"], report["distributed"]
    rows.append(("compile", f"{c['codegen'] or 'no codegen'}: {c['why']}"))
    collectives = {True: "the plugin's own communicator", False: "gloo (no collectives extension)"}
    rows.append(("distributed", collectives.get(d["collectives"], f"unknown: {d['why']}")))
    rows += [("findings", f"{f['level']}: {f['message']}") for f in report["findings"]] or [("findings", "none")]
    return "\n".join(f"{label:<13} {text}" for label, text in rows)


def run(as_json: bool) -> int:
    """Prints the report; 1 when a finding is an error."""
    report = gather()
    print(json.dumps(report, indent=2) if as_json else render(report))
    return 1 if any(f["level"] == ERROR for f in report["findings"]) else 0
