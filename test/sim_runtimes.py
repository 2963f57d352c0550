"""Where the simulated vendor runtimes (test/simrt) are and the environment
that points a CUDA-shaped plugin at one: shared by test/run_all.py and
test/python/test_cudalike_sim.py."""

from __future__ import annotations

import glob
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Vendor -> (the SDK variable its plugin searches, its folder under simrt/,
# the runtime library inside that folder).
VENDORS = {
    "cuda": ("CUDA_HOME", "cuda", "lib64/libcudart.so.13"),
    "ppu": ("PPU_SDK", "ppu", "CUDA_SDK/lib64/libcudart.so.13"),
    "metax": ("MACA_PATH", "metax", "lib/libmcruntime.so"),
    "dcu": ("ROCM_PATH", "dcu", "hip/lib/libgalaxyhip.so.5"),
    "musa": ("MUSA_HOME", "musa", "lib/libmusart.so"),
}
# Every variable a CUDA-shaped plugin searches: cleared, so that only the
# simulated runtime asked for is found.
SDK_VARS = ("CUDA_HOME", "CUDA_PATH", "PPU_SDK", "MACA_PATH", "MACA_HOME", "ROCM_PATH", "MUSA_HOME")


def simrt_dir() -> Path | None:
    """build/<tag>/simrt of the newest build, or None before `make setup`."""
    dirs = glob.glob(str(ROOT / "build" / "*" / "simrt"))
    return Path(max(dirs, key=os.path.getmtime)) if dirs else None


def environment(simrt: Path, vendor: str, **extra: str) -> dict[str, str]:
    """This process's environment with `vendor`'s simulated runtime (and no
    other SDK) to find, and its plugin chosen."""
    var, folder, _ = VENDORS[vendor]
    env = {k: v for k, v in os.environ.items() if k not in SDK_VARS}
    env.update({var: str(simrt / folder), "FLAGOS_PLUGIN": vendor, **extra})
    return env
