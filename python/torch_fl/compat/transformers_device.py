"""Hugging Face TrainingArguments.device and n_gpu under FLAGOS_ALIAS_CUDA.

In a single process TrainingArguments builds ``torch.device("cuda:0")`` when
torch.cuda says a GPU exists (the torch.cuda shim says so on flagos) and
moves the model there, which the alias already reads as flagos; this makes
the device it reports say so too (accelerate asks torch.accelerator, which
is flagos already). With several flagos devices in one process, n_gpu is 1:
the Trainer would wrap the model in nn.DataParallel, whose replication is
CUDA-only; several devices take one process each (torchrun, DDP).
Installed with the alias, once transformers' module loads.
"""

from __future__ import annotations

MODULE = "transformers.training_args"


def install(module) -> None:
    from torch_fl.compat.cuda_alias import _flagos

    cls = module.TrainingArguments
    original = cls.device
    if getattr(original.fget, "_flagos", False):
        return

    def device(self):
        return _device(_flagos(original.fget(self)))

    device._flagos = True
    cls.device = property(device, doc=original.__doc__)

    original_n_gpu = cls.n_gpu

    def n_gpu(self):
        n = original_n_gpu.fget(self)
        return 1 if n > 1 and self.device.type == "flagos" else n

    cls.n_gpu = property(n_gpu, doc=original_n_gpu.__doc__)


def _device(value):
    import torch

    return torch.device(value) if isinstance(value, str) else value
