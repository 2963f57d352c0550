"""DCU's pairing with DTK's torch: what ``import torch_fl`` checks with the
dcu plugin active, before anything is registered in torch.

- FLAGOS_DCU_VENDOR_CORE: a build and its import agree on DTK's core
  libraries. A torch_fl built for dcu records the value (DCU_VENDOR_CORE in
  torch_fl/_build_config.py); a dcu plugin wheel's bundle records its layout
  (the start-up hook refuses a bundle whose layout differs,
  python/_torch_fl_bundle.py). An import whose value differs fails naming both.
- Post-import checks, when DTK's torch is in the process (a bundle loaded, or
  an installed torch with torch.version.hip): the HIP release DTK's torch was
  built with equals the HIP runtime's (hipRuntimeGetVersion, or
  FLAGOS_DCU_HIP_VERSION where detection is wrong or impossible), and DTK's
  device libraries registered kernels under the CUDA dispatch key (what the
  cuda routes of backends_dcu.conf call). FLAGOS_DCU_SKIP_RUNTIME_CHECK=1
  skips both, for deliberately testing a non-matching pair.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys

from torch_fl import _build_config_reader, _env, _vendor_torch

VARIABLE = "FLAGOS_DCU_VENDOR_CORE"
HIP_VERSION = "FLAGOS_DCU_HIP_VERSION"
SKIP = "FLAGOS_DCU_SKIP_RUNTIME_CHECK"
# The HIP runtime sonames the dcu plugin opens (plugins/cudalike/vendors/dcu.cpp).
RUNTIMES = ("libgalaxyhip.so.5", "libgalaxyhip.so")
# An operator every HIP build of torch registers under the CUDA key.
PROBE_OP = "aten::add.Tensor"


def _release(version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a HIP version string, "6.2.41134-abc" or "6.2"."""
    m = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def runtime_hip() -> tuple[str | None, str]:
    """The HIP runtime's version and where it came from."""
    given = _env.get(HIP_VERSION)
    if given:
        return given, HIP_VERSION
    for soname in RUNTIMES:
        try:
            lib = ctypes.CDLL(soname, mode=os.RTLD_NOLOAD)
        except OSError:
            continue
        get = getattr(lib, "hipRuntimeGetVersion", None)
        value = ctypes.c_int(0)
        if get is not None and get(ctypes.byref(value)) == 0:
            v = value.value
            return f"{v // 10_000_000}.{v // 100_000 % 100}.{v % 100_000}", f"hipRuntimeGetVersion in {soname}"
    return None, "no HIP runtime loaded"


def torch_hip() -> tuple[str | None, str]:
    """The HIP release DTK's torch was built with, and which torch that is."""
    bundled = _vendor_torch.record("dcu")
    if bundled is not None:
        return bundled.get("hip"), f"DTK's torch {bundled.get('torch_version')} bundled by torch_fl-plugin-dcu"
    import torch

    return getattr(torch.version, "hip", None), f"the installed torch {torch.__version__}"


def _check_vendor_core() -> None:
    if _vendor_torch.record("dcu") is not None:
        return  # the start-up hook matched it against the loaded bundle's layout
    built = bool(_build_config_reader.record().get("DCU_VENDOR_CORE", False))
    now = bool(_env.get(VARIABLE))
    if built != now:
        raise RuntimeError(
            f"[flagos] {VARIABLE}={int(now)} at import, but this torch_fl was built with "
            f"{VARIABLE}={int(built)} (torch_fl/_build_config.py); the two must match: "
            f"{'unset it' if built is False else f'export {VARIABLE}=1'} or rebuild")


def _post_import_checks() -> None:
    built_with, which = torch_hip()
    if built_with is None and _vendor_torch.record("dcu") is None:
        return  # no DTK torch in the process: the cuda routes demote, nothing to pair
    if _env.get(SKIP):
        print(f"[flagos] {SKIP}=1: DTK torch's HIP release and CUDA-key kernels are not checked",
              file=sys.stderr, flush=True)
        return
    running, source = runtime_hip()
    if _release(running) is None:
        print(f"[flagos] dcu: the HIP runtime's version is unknown ({source}); {HIP_VERSION} names it",
              file=sys.stderr, flush=True)
    elif _release(built_with) != _release(running):
        raise RuntimeError(
            f"[flagos] dcu: {which} is built for HIP {built_with}, but the HIP runtime is {running} ({source}); "
            f"install the DTK that matches, or set {SKIP}=1 to test the pair anyway")
    import torch

    if not torch._C._dispatch_has_kernel_for_dispatch_key(PROBE_OP, "CUDA"):
        raise RuntimeError(
            f"[flagos] dcu: {which} registered no kernel under the CUDA dispatch key ({PROBE_OP}): DTK's "
            f"device libraries did not load before torch, so every cuda route would demote; "
            f"set {SKIP}=1 to go on without them")


def check(plugin_name: str | None) -> None:
    if plugin_name != "dcu":
        return
    _check_vendor_core()
    _post_import_checks()
