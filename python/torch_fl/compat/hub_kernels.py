"""Hugging Face ``kernels``, which transformers 5 requires, on flagos.

transformers kernelizes a loaded model again whenever its mode changes
(``model.train()``, ``from_pretrained(device_map=...)``), and ``kernels``
refuses any device type outside its fixed set with "ValueError: Unsupported
device type 'flagos'", so training a loaded model stops at ``.train()``. The
shim lets the flagos device through that one check: ``kernels`` then finds no
hub kernel registered for flagos and keeps each layer's own forward, which is
what runs on flagos. Every other device is checked as before.
"""

from __future__ import annotations

import torch

MODULE = "kernels._internals.layer.kernelize"


def install(module) -> None:
    original = getattr(module, "_validate_device_type", None)
    if original is None or getattr(original, "_flagos", False):
        return  # another kernels release: nothing to relax

    def validate(device_type: str) -> None:
        if device_type != torch._C._get_privateuse1_backend_name():
            original(device_type)

    validate._flagos = True
    module._validate_device_type = validate
