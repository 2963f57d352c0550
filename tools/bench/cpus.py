"""Which CPUs a GPU benchmark runs on.

Whole processes of the same code have run 34 to 47 ms per GPT-2 training
step on the same H200 host (docs/performance.md), and the step is bound by
the host. Running every timed process on the same few CPUs, near the GPU
(its PCI device's local_cpulist) and one per physical core, takes where the
scheduler happens to put a process out of the comparison: both sides run
on the same CPUs, one after the other.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def parse_cpulist(text: str) -> list[int]:
    """"0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus += range(int(first), int(last or first) + 1)
    return cpus


def _gpu_local_cpus(gpu: int) -> tuple[list[int], str]:
    """The CPUs local to CUDA device `gpu`'s PCI device, and its bus id; none
    where nvidia-smi or sysfs cannot say (without initialising CUDA here)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", f"--id={gpu}"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        domain, rest = out.split(":", 1)  # "00000000:18:00.0": sysfs spells the domain in 4 digits
        bus_id = f"{int(domain, 16):04x}:{rest}".lower()
        return parse_cpulist(Path(f"/sys/bus/pci/devices/{bus_id}/local_cpulist").read_text()), bus_id
    except (OSError, ValueError, subprocess.SubprocessError):
        return [], ""


def _core_of(cpu: int) -> str:
    try:
        return Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip()
    except OSError:
        return str(cpu)


def choose(count: int = 4, gpu: int = 0) -> tuple[list[int], str]:
    """Up to `count` CPUs this process may use, near GPU `gpu` where the
    machine says which those are, one per physical core; and a note saying
    how they were chosen."""
    allowed = sorted(os.sched_getaffinity(0))
    local, bus_id = _gpu_local_cpus(gpu)
    near = [c for c in allowed if c in set(local)]
    pool, where = (near, f"local to the GPU at {bus_id}") if len(near) >= count else (allowed, "of those allowed")
    chosen, cores = [], set()
    for cpu in pool:
        core = _core_of(cpu)
        if core not in cores:
            chosen.append(cpu)
            cores.add(core)
        if len(chosen) == count:
            break
    return chosen, f"CPUs {','.join(map(str, chosen))} ({where}, one per core)"


def pin(cpus: list[int]) -> None:
    """This process (and what it starts from now on) on `cpus`."""
    if cpus:
        os.sched_setaffinity(0, cpus)
