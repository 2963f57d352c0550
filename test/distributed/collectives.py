"""One rank of the collective checks: every collective of torch.distributed's
API on flagos tensors through the flagos backend, compared with the same
collective on CPU tensors through gloo (the reference). Prints one line per
check; exits non-zero on the first difference.

argv: the tier the world group must report (or a comma-separated choice)."""

from __future__ import annotations

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import torch_fl
import torch_fl.distributed

FLAGOS = torch.device("flagos")
CPU = torch.device("cpu")


def data(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    return torch.randint(1, 7, shape, generator=g, dtype=dtype)


def results(fn, device, group, rank, world):
    """Runs `fn` on `device` tensors; returns its outputs on the CPU."""
    out = fn(lambda shape, dtype, seed: data(shape, dtype, seed * 31 + rank).to(device), group, rank, world)
    return [t.to(CPU) if isinstance(t, torch.Tensor) else t for t in out]


# --- the checks: fn(make, group, rank, world) -> outputs --------------------------------

def all_reduce(op, dtype):
    def fn(make, group, rank, world):
        t = make((5, 3), dtype, 1)
        dist.all_reduce(t, op=op, group=group)
        return [t]
    return fn


def all_reduce_view(make, group, rank, world):
    base = make((4, 6), torch.float32, 2)
    view = base[1:3]  # storage offset: the collective must see only these rows
    dist.all_reduce(view, group=group)
    return [base]


def all_reduce_async(make, group, rank, world):
    t = make((64,), torch.float32, 3)
    work = dist.all_reduce(t, async_op=True, group=group)
    value = work.get_future().wait()
    work.wait()
    return [t, value[0]]


def broadcast(make, group, rank, world):
    t = make((7,), torch.float32, 4)
    dist.broadcast(t, src=world - 1, group=group)
    return [t]


def reduce(make, group, rank, world):
    t = make((3, 3), torch.float64, 5)
    dist.reduce(t, dst=world - 1, group=group)
    return [t] if rank == world - 1 else []


def all_gather(make, group, rank, world):
    out = [make((2, 3), torch.float32, 50 + i) for i in range(world)]
    dist.all_gather(out, make((2, 3), torch.float32, 6), group=group)
    return out


def all_gather_into_tensor(make, group, rank, world):
    out = make((world * 4,), torch.int64, 7)
    dist.all_gather_into_tensor(out, make((4,), torch.int64, 8), group=group)
    return [out]


def reduce_scatter(make, group, rank, world):
    out = make((5,), torch.float32, 9)
    dist.reduce_scatter(out, [make((5,), torch.float32, 10 + i) for i in range(world)], group=group)
    return [out]


def reduce_scatter_tensor(make, group, rank, world):
    out = make((3,), torch.float32, 11)
    dist.reduce_scatter_tensor(out, make((world * 3,), torch.float32, 12), group=group)
    return [out]


def all_to_all_list():
    """all_to_all's list form against its definition (gloo has it in some
    torch releases only): rank r's output i is rank i's input r."""
    rank, world = dist.get_rank(), dist.get_world_size()
    out = [torch.zeros(i + 1, 2, device=FLAGOS) for i in range(world)]
    inputs = [data((rank + 1, 2), torch.float32, (13 + i) * 31 + rank).to(FLAGOS) for i in range(world)]
    dist.all_to_all(out, inputs)
    want = [data((i + 1, 2), torch.float32, (13 + rank) * 31 + i) for i in range(world)]
    return all(torch.equal(o.cpu(), w) for o, w in zip(out, want)), out


def all_to_all_single_uneven(make, group, rank, world):
    # rank r sends r+i+1 rows to rank i; receives i+r+1 rows from rank i.
    send = [rank + i + 1 for i in range(world)]
    recv = [i + rank + 1 for i in range(world)]
    out = make((sum(recv), 2), torch.float32, 14)
    dist.all_to_all_single(out, make((sum(send), 2), torch.float32, 15), recv, send, group=group)
    return [out]


def gather(make, group, rank, world):
    dst = 0
    out = [make((3,), torch.float32, 70 + i) for i in range(world)] if rank == dst else None
    dist.gather(make((3,), torch.float32, 16), out, dst=dst, group=group)
    return out or []


def scatter(make, group, rank, world):
    src = world - 1
    out = make((4,), torch.float32, 17)
    chunks = [make((4,), torch.float32, 80 + i) for i in range(world)] if rank == src else None
    dist.scatter(out, chunks, src=src, group=group)
    return [out]


def send_recv(make, group, rank, world):
    t = make((6,), torch.float32, 18)
    peer = (rank + 1) % world
    if rank % 2 == 0:
        dist.send(t, dst=peer, group=group)
        dist.recv(t, src=peer, group=group)
    else:
        dist.recv(t, src=(rank - 1) % world, group=group)
        dist.send(t * 2, dst=(rank - 1) % world, group=group)
    return [t]


def isend_irecv(make, group, rank, world):
    out = make((6,), torch.float32, 19)
    a = dist.isend(make((6,), torch.float32, 20), dst=(rank + 1) % world, group=group)
    b = dist.irecv(out, src=(rank - 1) % world, group=group)
    a.wait()
    b.wait()
    return [out]


def batch_isend_irecv(make, group, rank, world):
    out = make((5,), torch.float32, 21)
    ops = [dist.P2POp(dist.isend, make((5,), torch.float32, 22), (rank + 1) % world, group),
           dist.P2POp(dist.irecv, out, (rank - 1) % world, group)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    return [out]


def object_collectives(make, group, rank, world):
    gathered = [None] * world
    dist.all_gather_object(gathered, {"rank": rank, "text": "x" * (rank + 3)}, group=group)
    objs = [f"from {rank}", [rank] * 3]
    dist.broadcast_object_list(objs, src=world - 1, group=group)
    got = [None]
    dist.scatter_object_list(got, [{"to": i} for i in range(world)] if rank == 0 else None, src=0, group=group)
    dest = [None] * world if rank == 0 else None
    dist.gather_object(("g", rank), dest, dst=0, group=group)
    return [gathered, objs, got, dest]


def barrier(make, group, rank, world):
    dist.barrier(group=group)
    return []


R = dist.ReduceOp
CHECKS = {
    **{f"all_reduce {op} {dtype}": all_reduce(getattr(R, op), dtype)
       for op in ("SUM", "PRODUCT", "MIN", "MAX") for dtype in (torch.float32, torch.int64)},
    **{f"all_reduce {op} int32": all_reduce(getattr(R, op), torch.int32) for op in ("BAND", "BOR", "BXOR")},
    "all_reduce SUM float16": all_reduce(R.SUM, torch.float16),
    "all_reduce offset view": all_reduce_view,
    "all_reduce async": all_reduce_async,
    "broadcast": broadcast, "reduce": reduce, "all_gather": all_gather,
    "all_gather_into_tensor": all_gather_into_tensor, "reduce_scatter": reduce_scatter,
    "reduce_scatter_tensor": reduce_scatter_tensor, "all_to_all_single uneven": all_to_all_single_uneven,
    "gather": gather, "scatter": scatter,
    "send/recv": send_recv, "isend/irecv": isend_irecv, "batch_isend_irecv": batch_isend_irecv,
    "object collectives": object_collectives, "barrier": barrier,
}


POINT_TO_POINT = ("send/recv", "isend/irecv", "batch_isend_irecv")


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return a == b


def main() -> int:
    expected_tiers = sys.argv[1].split(",")  # any of these
    backend = os.environ.get("DIST_BACKEND") or None
    dist.init_process_group(backend, timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    tier = torch_fl.distributed.tier()
    if tier not in expected_tiers:
        print(f"FAIL tier: {tier}, expected {' or '.join(expected_tiers)}")
        return 1
    reference = dist.new_group(backend="gloo")  # CPU tensors: gloo itself
    for name, fn in CHECKS.items():
        if world == 1 and name in POINT_TO_POINT:
            continue  # a rank cannot send to itself
        got = results(fn, FLAGOS, None, rank, world)
        want = results(fn, CPU, reference, rank, world)
        if len(got) != len(want) or not all(same(g, w) for g, w in zip(got, want)):
            print(f"FAIL {name}: flagos {got} != gloo {want}")
            return 1
        print(f"ok {name}")
    ok, out = all_to_all_list()
    if not ok:
        print(f"FAIL all_to_all: {out}")
        return 1
    print("ok all_to_all")
    # AVG: gloo has none; the flagos backend sums then divides.
    t = data((4,), torch.float32, rank).to(FLAGOS)
    dist.all_reduce(t, op=R.AVG)
    want = sum(data((4,), torch.float32, r) for r in range(world)) / world
    if not torch.allclose(t.cpu(), want):
        print(f"FAIL all_reduce AVG: {t.cpu()} != {want}")
        return 1
    print("ok all_reduce AVG")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
