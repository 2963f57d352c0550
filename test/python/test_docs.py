"""The user docs describe the software, not how it was made: no work-log
numbering, no path outside the repository, and every relative link resolves."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Work-log numbering ("session 9", "call 4") and pointers outside the
# repository (a design document kept elsewhere, absolute machine paths).
FORBIDDEN = [
    re.compile(r"\bsession \d+\b", re.IGNORECASE),
    re.compile(r"\bcall \d+\b", re.IGNORECASE),
    re.compile(r"\bDESIGN\.md\b"),
    re.compile(r"\.\./shared/|steering repo|spec/environment-variables\.txt", re.IGNORECASE),
    re.compile(r"(?<![\w.])/(work|tmp/bash_jobs|root)/"),
]

# [text](target) and <a href="target">, with any #anchor dropped.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|href=\"([^\"]+)\"")


def tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--", *patterns], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in out]


def user_docs() -> list[Path]:
    return [p for p in tracked("README.md", "docs", "tools/README.md") if p.suffix == ".md" and p.exists()]


def tree_text_files() -> list[Path]:
    this = Path(__file__).resolve()
    skip = {".tgz", ".whl", ".so", ".png", ".gz"}
    return [p for p in tracked(".") if p.suffix not in skip and p.resolve() != this and p.exists()]


def test_the_docs_exist():
    names = {p.relative_to(ROOT).as_posix() for p in user_docs()}
    assert {"README.md", "docs/architecture.md", "docs/performance.md"} <= names


@pytest.mark.parametrize("pattern", FORBIDDEN, ids=lambda p: p.pattern)
def test_no_work_log_or_outside_path_in_the_tree(pattern):
    hits = []
    for path in tree_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "\n".join(hits)


def test_every_relative_link_in_the_docs_resolves():
    broken = []
    for doc in user_docs():
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in LINK.finditer(line):
                target = (m.group(1) or m.group(2)).split("#", 1)[0]
                if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # same-page anchor, or a URL (https:, mailto:)
                if not (doc.parent / target).exists():
                    broken.append(f"{doc.relative_to(ROOT)}:{n}: {target}")
    assert not broken, "\n".join(broken)


def test_the_checks_catch_what_they_are_for(tmp_path):
    """The patterns and the link check reject what they exist to reject."""
    assert any(p.search("as measured in Session 12") for p in FORBIDDEN)
    assert any(p.search("see call 4 below") for p in FORBIDDEN)
    assert any(p.search("see DESIGN.md") for p in FORBIDDEN)
    assert not any(p.search("the session's stream, called 4 times") for p in FORBIDDEN)
    m = LINK.search("see [the guide](missing/guide.md#top)")
    assert m and not (tmp_path / m.group(1).split("#")[0]).exists()


def test_readme_and_performance_stay_short():
    assert len((ROOT / "README.md").read_text().splitlines()) < 200
    assert len((ROOT / "docs" / "performance.md").read_text().splitlines()) < 300
