"""Stand-in for FlagCX's torch plugin package (see ../README.md): the same
import path and order as plugin/torch/flagcx/__init__.py."""

import os

# As FlagCX's: autoload off around its own import torch, then popped.
os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
import torch  # noqa: E402,F401
os.environ.pop("TORCH_DEVICE_BACKEND_AUTOLOAD")

# FlagCX's torch_fl build imports torch_fl before its extension
# (FLAGCX_TORCH_BACKEND=flagos), so the stand-in does too.
if os.environ.get("FLAGCX_TORCH_BACKEND", "").strip().lower() == "flagos":
    import torch_fl  # noqa: F401

from ._C import *  # noqa: F401,F403,E402  (registers the "flagcx" backend)
from ._C import record  # noqa: F401,E402


def init():
    pass
