"""The workload's side of `perf record -D -1 --control fifo:CTL,ACK`: a loop
turns sampling on only while it runs, not during imports and warm-up
(tools/bench/perf_profile.py starts perf; op_cost --loop and train_loop run
under it)."""

from __future__ import annotations

import os
import select


class PerfControl:
    """Commands perf through its control fifos; does nothing without them."""

    def __init__(self, fifos: str | None):
        self._ctl = self._ack = None
        if fifos:
            ctl, ack = fifos.split(",")
            self._ctl = os.open(ctl, os.O_WRONLY)
            self._ack = os.open(ack, os.O_RDWR)

    def command(self, word: str) -> None:
        """"enable" or "disable"; waits for perf's acknowledgement."""
        if self._ctl is None:
            return
        os.write(self._ctl, f"{word}\n".encode())
        ready, _, _ = select.select([self._ack], [], [], 10)
        if not ready:
            raise RuntimeError(f"[flagos] perf did not acknowledge '{word}' within 10 s")
        os.read(self._ack, 64)
