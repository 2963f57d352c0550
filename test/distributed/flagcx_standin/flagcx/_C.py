"""Stand-in for the extension flagcx._C: loading it registers the "flagcx"
backend, as flagcxBackend::flagcxBackendConstructor does. Its backend is gloo
over host copies of the flagos operands."""

import os
import sys

import torch.distributed as dist

from torch_fl import _C as _torch_fl_C

API = os.environ.get("FLAGCX_STANDIN_API", "plain")
record = {"selector_at_import": os.environ.get("FLAGCX_TORCH_BACKEND"), "created": [], "options": []}


class ProcessGroupFlagCX:
    class Options:
        def __init__(self, enable_tuner=False, tune_group_idx=0):
            self.enable_tuner = enable_tuner
            self.tune_group_idx = tune_group_idx


def _backend(store, rank, size, timeout):
    if os.environ.get("FLAGCX_STANDIN_FAIL") == "1":
        raise RuntimeError("flagcx stand-in: no device communicator")
    backend = _torch_fl_C.GlooTierBackend(dist.ProcessGroupGloo(store, rank, size, timeout), zero_copy=False)
    record["created"].append(backend)
    print(f"flagcx stand-in: backend {len(record['created'])} for rank {rank} of {size}", file=sys.stderr, flush=True)
    return backend


if API == "extended":
    def createFlagcxBackend(backend_options, extra_options):  # noqa: N802 (FlagCX's name)
        record["options"].append(type(extra_options).__qualname__)
        return _backend(backend_options.store, backend_options.group_rank, backend_options.group_size,
                        backend_options.timeout)

    dist.Backend.register_backend("flagcx", createFlagcxBackend, extended_api=True, devices=("flagos",))
else:
    def createFlagcxBackend(store, rank, size, timeout):  # noqa: N802
        return _backend(store, rank, size, timeout)

    dist.Backend.register_backend("flagcx", createFlagcxBackend, devices=("flagos",))
