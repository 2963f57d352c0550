"""Options for every suite under test/ (run_all.py and the GPU script use them).

`--shard K/N` keeps every N-th collected test starting at the K-th
(1-based): N processes side by side run a suite once.
`--stop-after SECONDS` ends the session after the test running at that
point, summary and JUnit file written (a background process of a script
cannot be stopped by SIGINT: bash starts it with SIGINT ignored).
"""

from __future__ import annotations

import time

import pytest


def pytest_addoption(parser):
    parser.addoption("--shard", default=None, metavar="K/N",
                     help="run the K-th of N interleaved shares of the collected tests")
    parser.addoption("--stop-after", type=float, default=None, metavar="SECONDS",
                     help="stop the session (summary written) once it has run this long")


def _shard(config) -> tuple[int, int] | None:
    text = config.getoption("--shard")
    if not text:
        return None
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise pytest.UsageError(f"[flagos] --shard {text!r}: expected K/N with 1 <= K <= N")
    return int(k), int(n)


_STARTED = time.monotonic()


def pytest_runtest_teardown(item):
    limit = item.config.getoption("--stop-after")
    if limit is not None and time.monotonic() - _STARTED > limit:
        item.session.shouldstop = f"[flagos] --stop-after {limit:g} s reached"


def pytest_collection_modifyitems(config, items):
    shard = _shard(config)
    if shard:
        k, n = shard
        config.hook.pytest_deselected(items=[t for i, t in enumerate(items) if i % n != k - 1])
        items[:] = [t for i, t in enumerate(items) if i % n == k - 1]
