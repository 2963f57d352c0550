"""The machinery of test/gpu/run.py: stages registered by name with a time
limit and a main output file, run one after another (or side by side), each
command in a process group of its own that the stage's deadline interrupts
(SIGINT, then SIGKILL after GRACE_S), every line teed to OUT/log.txt, and a
summary table at the end. What the stages do stays in run.py."""

from __future__ import annotations

import datetime
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[2]  # every command runs here
GRACE_S = 30  # from SIGINT at a stage's limit to SIGKILL


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Log:
    """The terminal and OUT/log.txt, written from any thread."""

    def __init__(self, path: Path):
        self._file = open(path, "a", encoding="utf-8", errors="replace")
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            sys.stdout.write(text)
            sys.stdout.flush()
            self._file.write(text)
            self._file.flush()

    def say(self, *lines: str) -> None:
        self.write("".join(line + "\n" for line in lines))

    def close(self) -> None:
        self._file.close()


@dataclass
class Done:
    rc: int
    text: str  # what the command printed on the stream(s) read

    @property
    def ok(self) -> bool:
        return self.rc == 0


@dataclass
class Stage:
    name: str
    limit: int
    output: str  # main output file under OUT; its last line is the summary's note
    needs: Optional[str]
    fn: Callable[["StageRun"], "int | bool | None"]


STAGES: dict[str, Stage] = {}


def stage(name: str, limit: int, output: str, needs: Optional[str] = None):
    def register(fn):
        STAGES[name] = Stage(name, limit, output, needs, fn)
        return fn
    return register


class Runner:
    """One run: the results folder, the log, each stage's result."""

    def __init__(self, out: Path):
        self.out = out
        self.log = Log(out / "log.txt")
        self.order: list[str] = []
        self.result: dict[str, str] = {}
        self.seconds: dict[str, int] = {}
        self.note: dict[str, str] = {}
        self._groups: set[int] = set()  # process groups of the commands running now
        self._lock = threading.Lock()
        self.stopping = False  # set once the run is interrupted: no command starts after that

    def add_group(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def drop_group(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def stop_all(self) -> None:
        with self._lock:
            self.stopping = True
            groups = list(self._groups)
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)

    def run_stage(self, st: Stage) -> None:
        self.order.append(st.name)
        if st.needs and self.result.get(st.needs, "ok") != "ok":
            self.result[st.name] = f"skipped ({st.needs} failed)"
            return
        self.log.say("", f"=== {st.name}: {_now()}, limit {st.limit} s")
        run = StageRun(self, st)
        start = time.monotonic()
        try:
            rc = st.fn(run)
            rc = (0 if rc else 1) if isinstance(rc, bool) else int(rc or 0)
        except Exception:  # a stage's own error fails that stage only
            self.log.write(traceback.format_exc())
            rc = 1
        self.seconds[st.name] = round(time.monotonic() - start)
        if run.timed_out:
            self.result[st.name] = f"TIMEOUT ({st.limit} s)"
        else:
            self.result[st.name] = "ok" if rc == 0 else f"FAIL (exit {rc})"
        main = self.out / st.output
        if main.is_file():
            lines = [x for x in main.read_text(errors="replace").splitlines() if x.strip()]
            self.note[st.name] = lines[-1][:110] if lines else ""
        self.log.say(f"=== {st.name}: {self.result[st.name]} after {self.seconds[st.name]} s")

    def run_side_by_side(self, stages: list[Stage]) -> None:
        threads = [threading.Thread(target=self.run_stage, args=(st,), daemon=True) for st in stages]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def summary(self) -> None:
        width = max([len(n) for n in self.order] + [14])
        rows = [f"{'stage':<{width}} {'result':<22} {'seconds':>7}  last line of its output"]
        for name in self.order:
            rows.append(f"{name:<{width}} {self.result.get(name, 'not finished'):<22} "
                        f"{self.seconds.get(name, ''):>7}  {self.note.get(name, '')}")
        text = "\n" + f"== test/gpu/run.sh summary ({_now()}) ==\n" + "\n".join(rows) + "\n"
        self.log.write(text)
        (self.out / "summary.txt").write_text(text.lstrip("\n"))

    def pack(self) -> None:
        """Everything under OUT but summary.txt into OUT/results.tgz."""
        self.log.close()
        with tempfile.TemporaryDirectory() as tmp:
            packed = Path(tmp) / "results.tgz"
            with tarfile.open(packed, "w:gz") as tar:
                for entry in sorted(self.out.iterdir()):
                    if entry.name not in ("summary.txt", "results.tgz"):
                        tar.add(entry, arcname=entry.name)
            for entry in self.out.iterdir():
                if entry.is_dir():
                    shutil.rmtree(entry)
                elif entry.name != "summary.txt":
                    entry.unlink()
            shutil.move(str(packed), self.out / "results.tgz")


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class StageRun:
    """One stage being run: its commands share the stage's deadline."""

    def __init__(self, runner: Runner, st: Stage):
        self.runner, self.stage, self.out, self.log = runner, st, runner.out, runner.log
        self.deadline = time.monotonic() + st.limit
        self.timed_out = False

    def note(self, name: Optional[str], text: str, show: bool = True) -> None:
        """Appends text (and a newline) to OUT/name and to the log."""
        text = text if text.endswith("\n") else text + "\n"
        if name:
            with open(self.out / name, "a", encoding="utf-8") as f:
                f.write(text)
        if show:
            self.log.write(text)

    def sh(self, cmd: list, *, out: Optional[str] = None, append: bool = False, show: bool = True,
           stream: str = "both", env: Optional[dict] = None) -> Done:
        """Runs cmd in ROOT, in a process group of its own, until the stage's
        deadline. stream: "both" (stderr into stdout), "stdout" (stderr
        dropped) or "stderr" (stdout dropped) is read into OUT/out and, with
        show, the log; "split": stdout into OUT/out, stderr into the log."""
        if self.runner.stopping:
            return Done(130, "")
        if time.monotonic() >= self.deadline:
            self.timed_out = True
            return Done(124, "")
        file = open(self.out / out, "a" if append else "w", encoding="utf-8", errors="replace") if out else None
        stdout, stderr = subprocess.PIPE, subprocess.STDOUT
        if stream == "stdout":
            stderr = subprocess.DEVNULL
        elif stream == "stderr":
            stdout, stderr = subprocess.DEVNULL, subprocess.PIPE
        elif stream == "split":
            stdout, stderr = file, subprocess.PIPE
        try:
            proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, env={**os.environ, **(env or {})},
                                    stdout=stdout, stderr=stderr, start_new_session=True)
        except OSError as exc:
            if file:
                file.close()
            if show:
                self.log.say(f"[flagos] cannot run {cmd[0]}: {exc}")
            return Done(127, "")
        self.runner.add_group(proc.pid)
        remaining = max(0.0, self.deadline - time.monotonic())

        def interrupt():
            self.timed_out = True
            _signal_group(proc.pid, signal.SIGINT)

        timers = [threading.Timer(remaining, interrupt),
                  threading.Timer(remaining + GRACE_S, _signal_group, (proc.pid, signal.SIGKILL))]
        for t in timers:
            t.daemon = True
            t.start()
        chunks = []
        try:
            for raw in proc.stdout if stream in ("both", "stdout") else proc.stderr:
                line = raw.decode("utf-8", "replace")
                chunks.append(line)
                if file and stream != "split":
                    file.write(line)
                    file.flush()
                if show:
                    self.log.write(line)
            rc = proc.wait()
        finally:
            for t in timers:
                t.cancel()
            if proc.poll() is None:  # interrupted while reading: the command goes too
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
            self.runner.drop_group(proc.pid)
            if file:
                file.close()
        return Done(rc, "".join(chunks))

    def quiet(self, cmd: list, env: Optional[dict] = None) -> Done:
        """cmd's stdout, its stderr dropped, nothing written."""
        return self.sh(cmd, show=False, stream="stdout", env=env)
