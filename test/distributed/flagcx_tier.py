"""One rank of the flagcx tier checks (the stand-in FlagCX plugin in
flagcx_standin/ on PYTHONPATH): which tier the world group got, whether
FlagCX's plugin was imported and with which FLAGCX_TORCH_BACKEND, that the
group's flagos tensors reach the plugin's backend and its CPU tensors gloo,
then every collective of collectives.py on flagos tensors against gloo on CPU
tensors. Prints one line per fact or check; exits non-zero on a difference.

argv: the tier the world group must report."""

from __future__ import annotations

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import torch_fl
import torch_fl.distributed

import collectives


def main() -> int:
    expected = sys.argv[1]
    # The plugin is imported when a group is built, never by import torch_fl.
    print(f"flagcx imported by import torch_fl: {'flagcx' in sys.modules}")
    dist.init_process_group(timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    tier = torch_fl.distributed.tier()
    print(f"tier {tier}")
    if tier != expected:
        print(f"FAIL tier: {tier}, expected {expected}")
        return 1
    print(f"flagcx imported: {'flagcx' in sys.modules}")
    print(f"FLAGCX_TORCH_BACKEND={os.environ.get('FLAGCX_TORCH_BACKEND')}")
    print(f"TORCH_DEVICE_BACKEND_AUTOLOAD={os.environ.get('TORCH_DEVICE_BACKEND_AUTOLOAD')}")
    if tier == "flagcx":
        import flagcx
        print(f"FLAGCX_TORCH_BACKEND at import flagcx={flagcx.record['selector_at_import']}")
        print(f"flagcx options: {flagcx.record['options']}")
        world_group = dist.group.WORLD
        served = world_group._get_backend(torch.device("flagos"))
        if not any(served is b for b in flagcx.record["created"]):
            print(f"FAIL flagos tensors are served by {type(served).__name__}, not the flagcx backend")
            return 1
        print("ok flagos tensors reach the flagcx backend")
        cpu = world_group._get_backend(torch.device("cpu"))
        if not isinstance(cpu, dist.ProcessGroupGloo):
            print(f"FAIL CPU tensors are served by {type(cpu).__name__}, not gloo")
            return 1
        print("ok CPU tensors reach gloo")
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t)
    if t.tolist() != [world * (world + 1) / 2] * 3:
        print(f"FAIL all_reduce on CPU tensors: {t}")
        return 1
    reference = dist.new_group(backend="cpu:gloo")
    for name, fn in collectives.CHECKS.items():
        got = collectives.results(fn, collectives.FLAGOS, None, rank, world)
        want = collectives.results(fn, collectives.CPU, reference, rank, world)
        if len(got) != len(want) or not all(collectives.same(g, w) for g, w in zip(got, want)):
            print(f"FAIL {name}: flagos {got} != gloo {want}")
            return 1
        print(f"ok {name}")
    if tier == "flagcx":
        import flagcx
        print(f"flagcx backends created: {len(flagcx.record['created'])}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
