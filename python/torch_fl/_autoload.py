"""torch's device-backend autoload: ``import torch`` alone makes flagos available.

torch (2.5 and later) calls every entry point of the ``torch.backends`` group
at the end of ``import torch`` unless ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``;
torch_fl's is ``load`` (pyproject.toml). On MUSA the start-up hook sets that
variable to 0 if unset (docs/environment-variables.md), so there ``import
torch_fl`` stays explicit.
"""

from __future__ import annotations

import sys


def load() -> None:
    """Imports torch_fl, unless torch is being imported by torch_fl's own
    first line: that import then goes on from there."""
    package = sys.modules.get("torch_fl")
    if package is not None and "_initialize" not in vars(package):
        return
    import torch_fl  # noqa: F401
