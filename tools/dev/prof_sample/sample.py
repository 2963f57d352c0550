"""Host-time profiles of one thread, function by function, from
libprof_sample.so (prof_sample.c): where the calls of a loop spend their
time, in torch, torch_fl and the vendor runtime alike, without perf.

    with Sampler(lib_path, interval_us=20) as s:
        for _ in range(n): torch.add(a, b)
    profile = s.profile(calls=n)        # Profile: ns per call by function
    print(compare(native, flagos))      # markdown: where flagos spends more

Names come from each library's symbol tables (`nm`; torch's wheels keep
their dynamic symbols, the torch_fl build its full table) and segment
headers (`readelf`), so a stripped-down function shows as its nearest
exported symbol."""

from __future__ import annotations

import bisect
import ctypes
import os
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache


@dataclass
class Profile:
    """Per function ("name [library]"): ns per call spent in it (self) and
    under it (total), over `calls` calls sampled `samples` times."""
    calls: int
    samples: int
    interval_ns: float
    self_ns: dict[str, float] = field(default_factory=dict)
    total_ns: dict[str, float] = field(default_factory=dict)

    @property
    def ns_per_call(self) -> float:
        return self.samples * self.interval_ns / self.calls


class Sampler:
    """Samples the thread that enters the `with` block."""

    def __init__(self, lib_path: str, interval_us: int = 20, max_samples: int = 400_000):
        self._lib = ctypes.CDLL(lib_path, use_errno=True)
        self._lib.prof_sample_start.argtypes = [ctypes.c_long, ctypes.c_long]
        self._lib.prof_sample_stop.argtypes = [ctypes.c_char_p]
        self._lib.prof_sample_stop.restype = ctypes.c_long
        self._lib_path = os.path.realpath(lib_path)
        self._interval_us = interval_us
        self._max = max_samples
        self._raw: str | None = None

    def __enter__(self) -> Sampler:
        if self._lib.prof_sample_start(self._interval_us, self._max) != 0:
            raise OSError(ctypes.get_errno(), "[flagos] prof_sample_start failed")
        return self

    def __exit__(self, *exc) -> None:
        with tempfile.NamedTemporaryFile("r", suffix=".prof", delete=False) as f:
            path = f.name
        try:
            if self._lib.prof_sample_stop(path.encode()) < 0:
                raise OSError("[flagos] prof_sample_stop could not write " + path)
            with open(path) as f:
                self._raw = f.read()
        finally:
            os.unlink(path)

    def profile(self, calls: int) -> Profile:
        assert self._raw is not None, "profile() after the with block"
        return _parse(self._raw, calls, self._interval_us * 1000.0, self._lib_path)


@dataclass
class _Mapping:
    start: int
    end: int
    offset: int
    path: str


def _parse(raw: str, calls: int, interval_ns: float, own_lib: str) -> Profile:
    stacks, maps = [], []
    for line in raw.splitlines():
        if line.startswith("S "):
            stacks.append([int(a, 16) for a in line[2:].split()])
        elif line.startswith("M "):
            parts = line[2:].split(maxsplit=5)
            if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                maps.append(_Mapping(start, end, int(parts[2], 16), parts[5]))
    maps.sort(key=lambda m: m.start)
    starts = [m.start for m in maps]
    self_count: Counter[str] = Counter()
    total_count: Counter[str] = Counter()
    named: dict[int, str] = {}
    for stack in stacks:
        names = []
        frames = _interrupted(stack, maps, starts, own_lib)
        for depth, addr in enumerate(frames):
            # Past the interrupted frame each address is a return address:
            # the call is the byte before it.
            at = addr if depth == 0 else addr - 1
            if at not in named:
                named[at] = _name(at, maps, starts)
            names.append(named[at])
        if names:
            self_count[names[0]] += 1
            total_count.update(set(names))
    scale = interval_ns / calls
    return Profile(calls, len(stacks), interval_ns,
                   {k: v * scale for k, v in self_count.items()},
                   {k: v * scale for k, v in total_count.items()})


def _find(addr: int, maps: list[_Mapping], starts: list[int]) -> _Mapping | None:
    i = bisect.bisect_right(starts, addr) - 1
    return maps[i] if i >= 0 and addr < maps[i].end else None


def _interrupted(stack, maps, starts, own_lib) -> list[int]:
    """The frames below the signal: past the handler's own frames and the
    kernel's signal trampoline (one libc frame)."""
    i = 0
    while i < len(stack) and (m := _find(stack[i], maps, starts)) and m.path == own_lib:
        i += 1
    return stack[i + 1:]


def _name(addr: int, maps, starts) -> str:
    m = _find(addr, maps, starts)
    if m is None:
        return "?"
    file_offset = addr - m.start + m.offset
    vaddr = _to_vaddr(m.path, file_offset)
    addrs, names = _symbols(m.path)
    i = bisect.bisect_right(addrs, vaddr) - 1
    lib = os.path.basename(m.path)
    return f"{names[i] if i >= 0 else hex(vaddr)} [{lib}]"


@lru_cache(maxsize=None)
def _segments(path: str) -> list[tuple[int, int, int]]:
    """(file offset, vaddr, size) of each PT_LOAD segment."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "LOAD":
            segs.append((int(parts[1], 16), int(parts[2], 16), int(parts[4], 16)))
    return segs


def _to_vaddr(path: str, file_offset: int) -> int:
    for off, vaddr, size in _segments(path):
        if off <= file_offset < off + size:
            return file_offset - off + vaddr
    return file_offset


@lru_cache(maxsize=None)
def _symbols(path: str) -> tuple[list[int], list[str]]:
    """Sorted function addresses and names, from the full symbol table and
    the dynamic one (either may be missing)."""
    table = {}
    for flags in (["-D"], []):
        out = subprocess.run(["nm", "-C", "--defined-only", *flags, path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] in "TtWi":
                table.setdefault(int(parts[0], 16), parts[2])
    addrs = sorted(table)
    return addrs, [table[a] for a in addrs]


def compare(base: Profile, other: Profile, base_name: str, other_name: str, top: int = 25,
            width: int = 110) -> str:
    """Markdown: both sides' ns per call, then the functions whose self time
    grew the most on `other` and the functions under which it spends the most
    that `base` never reaches."""
    def short(name: str) -> str:
        return name if len(name) <= width else name[:width - 1] + "…"

    lines = [f"{base_name}: {base.ns_per_call:.0f} ns per call ({base.samples} samples); "
             f"{other_name}: {other.ns_per_call:.0f} ns per call ({other.samples} samples)", "",
             f"| function (self time) | {base_name} ns/call | {other_name} ns/call | difference |",
             "|---|---:|---:|---:|"]
    keys = set(base.self_ns) | set(other.self_ns)
    grown = sorted(keys, key=lambda k: other.self_ns.get(k, 0) - base.self_ns.get(k, 0), reverse=True)
    for k in grown[:top]:
        b, o = base.self_ns.get(k, 0.0), other.self_ns.get(k, 0.0)
        lines.append(f"| `{short(k)}` | {b:.0f} | {o:.0f} | {o - b:+.0f} |")
    lines += ["", f"| function only {other_name} reaches (total time under it) | {other_name} ns/call |", "|---|---:|"]
    only = sorted((k for k in other.total_ns if k not in base.total_ns), key=lambda k: -other.total_ns[k])
    for k in only[:top]:
        lines.append(f"| `{short(k)}` | {other.total_ns[k]:.0f} |")
    return "\n".join(lines)
