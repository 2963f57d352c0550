"""Makes PrivateUse1 the ``flagos`` device in torch (import step 4).

Once per process: rename the backend, register ``torch.flagos``, and generate
``Tensor.flagos()``, ``Module.flagos()``, ``Storage.flagos()`` and friends.
A process where something else already claimed PrivateUse1 under another
name cannot host flagos; that is one clear error.
"""

from __future__ import annotations

import torch

_registered = False


def check() -> None:
    """Raises when this process cannot host flagos; registers nothing."""
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", "flagos"):
        raise RuntimeError(
            f"[flagos] PrivateUse1 is already registered as '{current}' in this process; "
            "torch_fl needs it as 'flagos' (import torch_fl before other PrivateUse1 backends)"
        )


def register() -> None:
    global _registered
    if _registered:
        return
    check()
    torch.utils.rename_privateuse1_backend("flagos")
    from torch_fl import flagos

    torch._register_device_module("flagos", flagos)
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    _registered = True
