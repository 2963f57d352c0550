"""Starts a script as N ranks on this machine, as torchrun would set them up
(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; OMP_NUM_THREADS=1
unless set), and collects each rank's exit status and output. Every rank is killed at `timeout`, so a hung
collective fails the test instead of the suite."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class Rank:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(script: str, args: list[str], env: dict[str, str], world_size: int = 2,
           timeout: float = 120.0, path: tuple[str, ...] = ()) -> list[Rank]:
    """`path`: directories put on PYTHONPATH ahead of this one."""
    port = str(free_port())
    procs = []
    for rank in range(world_size):
        rank_env = dict(env, OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"), RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                        PYTHONPATH=os.pathsep.join([*path, str(HERE)]))
        procs.append(subprocess.Popen([sys.executable, str(HERE / script), *args], env=rank_env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + timeout
    ranks = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            ranks.append(Rank(p.returncode, out, err))
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            ranks.append(Rank(None, out, err))
    return ranks


def describe(ranks: list[Rank]) -> str:
    return "\n".join(f"--- rank {i}: exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
                     for i, r in enumerate(ranks))
