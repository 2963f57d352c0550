"""The environment surface (docs/environment-variables.md), read from the one
declaration in the core (core/runtime/env/variables.cpp).

Every owned read goes through :func:`get`, which calls the core's parser, so
C++ and Python apply the same rules: booleans are ``1/true/on/yes`` and
``0/false/off/no`` in any case; an empty value is unset (the default, not
"off"); anything else prints one ``[flagos]`` line and yields the default;
an enum outside its choices reports them and yields the default.

``VARIABLES`` maps every owned name to its :class:`Variable`; ``FAMILIES``,
``FOREIGN`` and ``RETIRED`` hold the dynamic ``FLAGOS_OP_<op>`` family, the
names other projects own, and the names earlier revisions read.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from torch_fl import _C, _stderr_lines


@dataclass(frozen=True)
class Variable:
    name: str
    scope: str  # Build, Runtime, Build & Runtime, Test, Build (codegen)
    type: str  # bool, enum, int, float, path, list, string
    default: str  # machine default ("" = none; bools "1"/"0")
    default_doc: str  # the doc's Default column, verbatim
    choices: tuple[str, ...]
    purpose: str
    group: str
    waits_for: str  # "" = implemented; else the subject it waits for
    implemented_on: str = ""  # implemented, but run only there (e.g. "simulated runtime only")


@dataclass(frozen=True)
class Family:
    prefix: str
    placeholder: str
    scope: str
    default_doc: str
    purpose: str
    group: str
    waits_for: str


@dataclass(frozen=True)
class Foreign:
    name: str
    fallback: str
    owner: str
    direction: str  # "set-if-unset" or "read"
    direction_doc: str
    purpose: str


@dataclass(frozen=True)
class Retired:
    name: str
    successor: str
    replaced_by: str


def _choices(text: str) -> tuple[str, ...]:
    return tuple(c for c in text.split(",") if c)


VARIABLES: dict[str, Variable] = {
    v["name"]: Variable(**{**v, "choices": _choices(v["choices"])}) for v in _C.env_variables()
}
FAMILIES: tuple[Family, ...] = tuple(Family(**f) for f in _C.env_families())
FOREIGN: dict[str, Foreign] = {f["name"]: Foreign(**f) for f in _C.env_foreign()}
RETIRED: dict[str, Retired] = {r["name"]: Retired(**r) for r in _C.env_retired()}

PREFIX = "FLAGOS_"


def family_of(name: str) -> Family | None:
    for fam in FAMILIES:
        if name.startswith(fam.prefix) and len(name) > len(fam.prefix):
            return fam
    return None


def get(name: str) -> Any:
    """The effective, typed value of an owned variable (or an ``FLAGOS_OP_<op>``
    member): bool, int, float, str, list[str], or None where there is neither
    a value nor a default. A value that does not parse is reported once."""
    if name not in VARIABLES and family_of(name) is None:
        raise KeyError(f"{name} is not a declared torch_fl variable")
    return _C.env_get(name)


def _warn(message: str) -> None:
    print(f"[flagos] {message}", file=sys.stderr, flush=True)


def unknown_names(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """(name, suggestion) for each FLAGOS_* name in `environ` that is neither
    declared, nor retired, nor an FLAGOS_OP_<op>. The suggestion is the closest
    declared name; a near-miss of a retired name points at its successor."""
    environ = os.environ if environ is None else environ
    # Compared without the shared FLAGOS_ prefix, which would otherwise make
    # every name look close to every other.
    candidates = [n[len(PREFIX):] for n in list(VARIABLES) + list(RETIRED) if n.startswith(PREFIX)]
    found = []
    for name in sorted(environ):
        if not name.startswith(PREFIX) or name in VARIABLES or name in RETIRED or family_of(name):
            continue
        close = difflib.get_close_matches(name[len(PREFIX):], candidates, n=1)
        suggestion = None
        if close:
            suggestion = PREFIX + close[0]
            if suggestion in RETIRED:
                suggestion = RETIRED[suggestion].successor or None
        found.append((name, suggestion))
    return found


@dataclass(frozen=True)
class Finding:
    """One problem the environment scan reports: the variable, and the
    ``[flagos]`` line's text without its prefix."""
    name: str
    message: str


def _unknown_name_message(name: str, suggestion: str | None) -> str:
    hint = f"; did you mean {suggestion}?" if suggestion else ""
    # A name may hold any character but "=": control characters shown as
    # "?", so that the report stays one line.
    shown = "".join(c if c.isprintable() else "?" for c in name)
    return f"{shown} is not a torch_fl variable and nothing reads it{hint}"


def _value_findings(lines: list[str]) -> list[Finding]:
    """The core's bad-value lines ("NAME='v' is not ...", "NAME entry 'x' ...")
    as findings, each under the variable it names."""
    found = []
    for line in lines:
        if line.startswith("[flagos] "):
            message = line[len("[flagos] "):]
            found.append(Finding(re.split(r"[=\s]", message, maxsplit=1)[0], message))
    return found


_findings: list[Finding] | None = None


def check_environment(keep_lines: bool = False) -> list[Finding]:
    """The import-time scan: one line per unknown FLAGOS_* name, then one line
    per set Runtime variable whose value does not parse. It runs once per
    process (the core says each bad value once); later calls return its findings.
    The core's value lines go straight to file descriptor 2: only with
    `keep_lines` (the CLI, whose doctor reports them again) is that descriptor
    captured for the call, so a plain import never touches it."""
    global _findings
    if _findings is None:
        found = []
        for name, suggestion in unknown_names():
            found.append(Finding(name, _unknown_name_message(name, suggestion)))
            _warn(found[-1].message)
        if keep_lines:
            _, lines = _stderr_lines.captured(_C.env_validate_runtime)
        else:
            _C.env_validate_runtime()
            lines = []
        _findings = found + _value_findings(lines)
    return list(_findings)


def set_foreign(name: str, value: str) -> bool:
    """Fills a set-if-unset interoperability name for the library that reads it.
    Never overrides an explicit export, including an empty one (a user's way
    of saying "not this vendor"). Returns whether it wrote the value."""
    entry = FOREIGN.get(name)
    if entry is None or entry.direction != "set-if-unset":
        raise KeyError(f"{name} is not a set-if-unset interoperability variable")
    if name in os.environ:
        return False
    os.environ[name] = value
    return True
