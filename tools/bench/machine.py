"""What a benchmark result was measured on: date, machine, versions, plugin."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

import torch

import torch_fl


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _commit() -> str:
    """The tree measured: HEAD, marked "+changes" when the work tree differs."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" +changes" if dirty else "")


def describe() -> dict:
    info = torch_fl.plugin_info()
    return {
        "date": datetime.date.today().isoformat(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_fl": torch_fl.__version__,
        "commit": _commit(),
        "plugin": f"{info['name']} {info['version']} (ABI {info['abi']})",
        "plugin_options": os.environ.get("FLAGOS_PLUGIN_OPTIONS", ""),
        "load_average": _load(),
    }
