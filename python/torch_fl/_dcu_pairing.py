"""FLAGOS_DCU_VENDOR_CORE: a build and its import agree on DTK's core libraries.

The variable chooses, at build time, between the official PyTorch core and
DTK's forked core libraries, and a wheel built one way cannot run the other.
The build records its value (DCU_VENDOR_CORE in torch_fl/_build_config.py);
with the dcu plugin active, an import whose value differs fails naming both,
before anything is registered in torch. Using DTK's core libraries waits for
DTK's torch (docs/platforms/dcu.md).
"""

from __future__ import annotations

from torch_fl import _build_config_reader, _env

VARIABLE = "FLAGOS_DCU_VENDOR_CORE"


def check(plugin_name: str | None) -> None:
    if plugin_name != "dcu":
        return
    built = bool(_build_config_reader.record().get("DCU_VENDOR_CORE", False))
    now = bool(_env.get(VARIABLE))
    if built != now:
        raise RuntimeError(
            f"[flagos] {VARIABLE}={int(now)} at import, but this torch_fl was built with "
            f"{VARIABLE}={int(built)} (torch_fl/_build_config.py); the two must match: "
            f"{'unset it' if built is False else f'export {VARIABLE}=1'} or rebuild")
