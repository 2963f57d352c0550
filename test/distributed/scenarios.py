"""One rank of the small distributed scenarios; argv[1] names one. Each
prints "ok <what>" lines and exits 0, or raises.

- redirect: init_process_group("gloo") serves flagos tensors (through the
  flagos backend) and CPU tensors (gloo), and still says "gloo";
- redirect-off: the same with FLAGOS_DIST_REDIRECT_GLOO=0 fails on a flagos
  tensor with torch's error, as plain gloo does;
- mesh: init_device_mesh("flagos", ...) with no group yet, a collective over
  the mesh's group, and the tier of each group;
- default: init_process_group() with no backend serves flagos and CPU
  tensors, and DDP trains over it (torch gives the group gloo as its default
  backend, which DDP asks for);
- dead-peer: rank 1 exits without joining a collective; rank 0 must fail with
  an error (at once on gloo, at the 4 s timeout on a communicator) instead
  of hanging;
- silent-peer: rank 1 lives on but never joins; rank 0's collective fails
  with a timeout error after the group's timeout (3 s)."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import torch_fl
import torch_fl.distributed

FLAGOS = torch.device("flagos")


def redirect(rank, world):
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    assert dist.get_backend() == "gloo", dist.get_backend()
    t = torch.full((3,), float(rank + 1), device=FLAGOS)
    dist.all_reduce(t)
    assert t.cpu().tolist() == [3.0] * 3, t
    c = torch.full((2,), rank + 1)
    dist.all_reduce(c)
    assert c.tolist() == [3, 3], c
    print(f"ok redirected gloo serves flagos and cpu tensors, tier {torch_fl.distributed.tier()}")
    sub = dist.new_group(backend="gloo")
    t = torch.ones(2, device=FLAGOS)
    dist.all_reduce(t, group=sub)
    assert t.cpu().tolist() == [2.0, 2.0]
    print("ok new_group(backend='gloo') serves flagos tensors")


def redirect_off(rank, world):
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    try:
        dist.all_reduce(torch.ones(2, device=FLAGOS))
    except RuntimeError as e:
        print(f"ok plain gloo refuses flagos tensors: {str(e).splitlines()[0]}")
        return
    raise AssertionError("plain gloo reduced a flagos tensor")


def mesh(rank, world):
    from torch.distributed.device_mesh import init_device_mesh
    m = init_device_mesh("flagos", (world,))
    t = torch.full((2,), float(rank), device=FLAGOS)
    dist.all_reduce(t, group=m.get_group())
    assert t.cpu().tolist() == [float(sum(range(world)))] * 2, t
    print(f"ok device mesh on flagos, default backend {dist.get_backend()}, "
          f"tier {torch_fl.distributed.tier(m.get_group())}")


def default(rank, world):
    dist.init_process_group(timeout=timedelta(seconds=60))
    t = torch.full((3,), float(rank + 1), device=FLAGOS)
    dist.all_reduce(t)
    c = torch.full((2,), rank + 1)
    dist.all_reduce(c)
    assert t.cpu().tolist() == [3.0] * 3 and c.tolist() == [3, 3], (t, c)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2).to(FLAGOS))
    model(torch.full((2, 4), float(rank), device=FLAGOS)).sum().backward()
    grad = model.module.weight.grad.cpu()
    assert torch.allclose(grad, torch.full((2, 4), sum(range(world)) / world * 2)), grad
    print(f"ok no backend: flagos and cpu tensors, DDP, tier {torch_fl.distributed.tier()}")


def lost_collective():
    """A collective the peer never joins, then a blocking one: on the gloo
    tiers the first raises; on a communicator the first only orders the
    stream, and the barrier raises once the watchdog aborted the group."""
    dist.all_reduce(torch.ones(4, device=FLAGOS))
    dist.barrier()


def dead_peer(rank, world):
    dist.init_process_group("flagos", timeout=timedelta(seconds=4))
    dist.barrier()
    if rank == 1:
        os._exit(0)  # gone without a word, mid-job
    start = time.monotonic()
    try:
        lost_collective()
    except Exception as e:  # gloo's error (connection closed), or the communicator aborted at the timeout
        print(f"ok peer loss fails the collective after {time.monotonic() - start:.1f} s: "
              f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        os._exit(0)  # the group cannot be torn down cleanly without its peer
    raise AssertionError("collectives without the peer returned")


def silent_peer(rank, world):
    dist.init_process_group("flagos", timeout=timedelta(seconds=3))
    dist.barrier()
    if rank == 1:
        time.sleep(6)  # alive past the timeout, never joins
        os._exit(0)
    start = time.monotonic()
    try:
        lost_collective()
    except Exception as e:
        waited = time.monotonic() - start
        assert waited < 15, f"failed only after {waited:.1f} s, past the 3 s timeout"
        print(f"ok a silent peer times the collective out after {waited:.1f} s: "
              f"{type(e).__name__}: {str(e).splitlines()[0][-120:]}")
        os._exit(0)
    raise AssertionError("collectives without the peer returned")


SCENARIOS = {"redirect": redirect, "redirect-off": redirect_off, "mesh": mesh, "default": default,
             "dead-peer": dead_peer,
             "silent-peer": silent_peer}

if __name__ == "__main__":
    SCENARIOS[sys.argv[1]](int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    if dist.is_initialized():
        dist.destroy_process_group()
