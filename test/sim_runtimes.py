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
    "gcu": ("TOPS_HOME", "gcu", "lib/libtopsrt.so"),
    "tsingmicro": ("KUIPER_PATH", "tsingmicro", "lib/libhpgr.so"),
    "ascend": ("ASCEND_HOME", "ascend", "lib64/libascendcl.so"),
    # No SDK variable: the BPU libraries live in /usr/hobot/lib, so the
    # plugin's runtime= option names the simulated one (runtime_option).
    "bpu": (None, "bpu", "lib/libhbucp.so"),
}
# Every variable a CUDA-shaped plugin searches: cleared, so that only the
# simulated runtime asked for is found.
SDK_VARS = ("CUDA_HOME", "CUDA_PATH", "PPU_SDK", "MACA_PATH", "MACA_HOME", "ROCM_PATH", "MUSA_HOME", "TOPS_HOME",
            "KUIPER_PATH", "ASCEND_HOME")


def simrt_dir() -> Path | None:
    """build/<tag>/simrt of the newest build, or None before `make setup`."""
    dirs = glob.glob(str(ROOT / "build" / "*" / "simrt"))
    return Path(max(dirs, key=os.path.getmtime)) if dirs else None


def environment(simrt: Path, vendor: str, **extra: str) -> dict[str, str]:
    """This process's environment with `vendor`'s simulated runtime (and no
    other SDK) to find, and its plugin chosen."""
    var, folder, _ = VENDORS[vendor]
    env = {k: v for k, v in os.environ.items() if k not in SDK_VARS}
    found = {var: str(simrt / folder)} if var else {"FLAGOS_PLUGIN_OPTIONS": runtime_option(simrt, vendor)}
    env.update({**found, "FLAGOS_PLUGIN": vendor, **extra})
    return env


def runtime_option(simrt: Path, vendor: str) -> str:
    """The plugin option naming `vendor`'s simulated runtime library, for a
    vendor whose runtime no SDK variable locates (and for the conformance
    runner, which takes options, not FLAGOS_PLUGIN_OPTIONS)."""
    _, folder, library = VENDORS[vendor]
    return f"runtime={simrt / folder / library}"
