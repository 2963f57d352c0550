"""The registry (core/runtime/env/variables.cpp, as torch_fl._env) and the
reference doc (docs/environment-variables.md) must agree on every name, scope,
Default text and ledger status; interoperability and retired tables too. The
mutation tests show the check fails when either side is edited alone."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from torch_fl import _env

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "environment-variables.md"
PLATFORMS = ROOT / "confs" / "flagos_platforms.json"


def _cells(line: str) -> list[str]:
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def parse_doc(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """{"owned": {name: {scope, default, status}}, "foreign": {...}, "retired": {...}}"""
    out: dict[str, dict] = {"owned": {}, "foreign": {}, "retired": {}}
    kind = None
    for line in text.splitlines():
        if not line.startswith("|"):
            kind = None
            continue
        cells = _cells(line)
        if cells[:3] == ["Variable", "Scope", "Default"]:
            kind = "owned"
        elif cells[:3] == ["Variable", "Owner", "Direction"]:
            kind = "foreign"
        elif cells[:2] == ["Retired", "Replaced by"]:
            kind = "retired"
        elif kind is None or set("".join(cells)) <= set("-"):
            continue
        elif kind == "owned":
            name = cells[0].strip("`")
            assert name not in out["owned"], f"{name} documented twice"
            out["owned"][name] = {"scope": cells[1], "default": cells[2], "status": cells[4]}
        elif kind == "foreign":
            m = re.fullmatch(r"`([A-Z0-9_]+)`(?: \(`([A-Z0-9_]+)` fallback\))?", cells[0])
            assert m, cells[0]
            out["foreign"][m.group(1)] = {"fallback": m.group(2) or "", "owner": cells[1],
                                          "direction": cells[2]}
        elif kind == "retired":
            for name in re.findall(r"`([A-Z0-9_]+)`", cells[0]):
                out["retired"][name] = {"replaced_by": cells[1]}
    return out


def _status(waits_for: str, implemented_on: str = "") -> str:
    if waits_for:
        return f"waits for: {waits_for}"
    return f"implemented ({implemented_on})" if implemented_on else "implemented"


def registry_view(variables=None, families=None, foreign=None, retired=None) -> dict:
    variables = _env.VARIABLES.values() if variables is None else variables
    families = _env.FAMILIES if families is None else families
    foreign = _env.FOREIGN.values() if foreign is None else foreign
    retired = _env.RETIRED.values() if retired is None else retired
    owned = {v.name: {"scope": v.scope, "default": v.default_doc, "status": _status(v.waits_for, v.implemented_on)}
             for v in variables}
    for f in families:
        owned[f.prefix + f.placeholder] = {"scope": f.scope, "default": f.default_doc,
                                           "status": _status(f.waits_for)}
    return {
        "owned": owned,
        "foreign": {f.name: {"fallback": f.fallback, "owner": f.owner, "direction": f.direction_doc}
                    for f in foreign},
        "retired": {r.name: {"replaced_by": r.replaced_by} for r in retired},
    }


def disagreements(doc: dict, registry: dict) -> list[str]:
    problems = []
    for kind in ("owned", "foreign", "retired"):
        d, r = doc[kind], registry[kind]
        problems += [f"{kind}: {n} is in the registry but not the doc" for n in sorted(r.keys() - d.keys())]
        problems += [f"{kind}: {n} is in the doc but not the registry" for n in sorted(d.keys() - r.keys())]
        for name in sorted(d.keys() & r.keys()):
            for field in r[name]:
                if d[name][field] != r[name][field]:
                    problems.append(f"{kind}: {name} {field}: doc {d[name][field]!r} != "
                                    f"registry {r[name][field]!r}")
    return problems


@pytest.fixture(scope="module")
def doc_text() -> str:
    return DOC.read_text()


def test_registry_and_doc_agree(doc_text):
    assert disagreements(parse_doc(doc_text), registry_view()) == []


def test_the_doc_covers_the_whole_spec_surface(doc_text):
    parsed = parse_doc(doc_text)
    # 54 owned names of the spec + FLAGOS_OP_<name> + torch_fl's two plugin variables.
    assert len(parsed["owned"]) == 57
    # 24 of the spec + KUIPER_PATH, the TsingMicro SDK root the plugin searches.
    assert len(parsed["foreign"]) == 25
    assert len(parsed["retired"]) == 27


@pytest.mark.parametrize("edit", [
    ("| `FLAGOS_ALIAS_CUDA` | Runtime | 1 (on) |", "| `FLAGOS_ALIAS_CUDA` | Runtime | 0 (off) |"),
    ("| `FLAGOS_TRACE` | Runtime |", "| `FLAGOS_TRACE` | Build |"),
    ("| `FLAGOS_LOG` |", "| `FLAGOS_LOGS` |"),
    ("`FLAGOS_MUPTI_DEBUG`, ", ""),
    ("| `GEMS_VENDOR` | FlagGems | Set if unset |", "| `GEMS_VENDOR` | FlagGems | Read |"),
])
def test_a_doc_edited_alone_is_detected(doc_text, edit):
    old, new = edit
    assert doc_text.count(old) == 1, old
    assert disagreements(parse_doc(doc_text.replace(old, new)), registry_view())


def test_a_doc_row_added_alone_is_detected(doc_text):
    row = "| `FLAGOS_TRACE` | Runtime | 0 (off) |"
    line = next(l for l in doc_text.splitlines() if l.startswith(row))
    extra = line.replace("FLAGOS_TRACE", "FLAGOS_NEW_SWITCH")
    problems = disagreements(parse_doc(doc_text.replace(line, line + "\n" + extra)), registry_view())
    assert problems == ["owned: FLAGOS_NEW_SWITCH is in the doc but not the registry"]


def test_a_registry_edited_alone_is_detected(doc_text):
    doc = parse_doc(doc_text)
    variables = list(_env.VARIABLES.values())
    # A variable that still waits for something: marking it implemented in the registry alone must show.
    waiting = next(i for i, v in enumerate(variables) if v.waits_for)
    for i, field, value in [(5, "scope", "Runtime"), (7, "default_doc", "ON"), (waiting, "waits_for", "")]:
        edited = list(variables)
        edited[i] = dataclasses.replace(edited[i], **{field: value})
        assert disagreements(doc, registry_view(variables=edited)), (edited[i].name, field)
    assert disagreements(doc, registry_view(variables=variables[:-1]))
    assert disagreements(doc, registry_view(retired=list(_env.RETIRED.values())[1:]))


def test_platform_table_matches_the_registry_defaults():
    """The machine default of each FLAGOS_BUILD_* bool is its value for the
    default accelerator; confs/flagos_platforms.json holds the rest."""
    platforms = json.loads(PLATFORMS.read_text())
    platforms.pop("_comment")
    assert sorted(platforms) == sorted(_env.VARIABLES["FLAGOS_ACCELERATOR"].choices)
    default = platforms[_env.VARIABLES["FLAGOS_ACCELERATOR"].default]
    for name, value in default["defaults"].items():
        assert _env.VARIABLES[name].default == ("1" if value else "0"), name
    # The per-platform words of the Default column, checked against the table.
    assert [a for a, p in platforms.items() if not p["defaults"]["FLAGOS_BUILD_VENDOR"]] == ["metax"]
    assert [a for a, p in platforms.items() if not p["defaults"]["FLAGOS_BUILD_FLAGGEMS"]] == ["bpu"]
    assert [a for a, p in platforms.items() if p["defaults"]["FLAGOS_BUILD_FLAGGEMS_CPP"]] == ["cuda"]
    assert [a for a, p in platforms.items() if p["defaults"]["FLAGOS_BUILD_TILEOPS"]] == ["cuda"]
    assert not any(p["defaults"]["FLAGOS_BUILD_BOXING"] for p in platforms.values())
    forced = {a: p["forced"] for a, p in platforms.items() if p["forced"]}
    assert forced == {"tsingmicro": {"FLAGOS_BUILD_VENDOR": True},
                      "dcu": {"FLAGOS_BUILD_FLAGGEMS_CPP": False},
                      "musa": {"FLAGOS_BUILD_FLAGGEMS_CPP": False},
                      "bpu": {"FLAGOS_BUILD_FLAGGEMS_CPP": False}}
    for a, p in platforms.items():  # a forced value is also that platform's default
        for name, value in p["forced"].items():
            assert p["defaults"][name] == value, (a, name)


def test_retired_successors_are_declared():
    for r in _env.RETIRED.values():
        assert r.successor == "" or r.successor in _env.VARIABLES, r
        assert r.name not in _env.VARIABLES
