"""One rank of the training checks on the flagos backend, each compared with
the same training in one process, step by step:
- ddp: DistributedDataParallel over the ranks, each on its share of a batch,
  against one model trained on the whole batch;
- fsdp: FSDP2 (fully_shard) on a small transformer, against the same;
- dcp: a torch.distributed.checkpoint save of the FSDP2 model and optimizer,
  loaded into a fresh one, which then continues identically.
Prints one line per step and check; exits non-zero at the first difference.

argv: the checks to run."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn

import torch_fl  # noqa: F401

FLAGOS = torch.device("flagos")
STEPS = 3
# Float sums in another order (and, on an accelerator, other kernels): close, not equal.
TOL = dict(rtol=float(os.environ.get("TRAINING_RTOL", "1e-5")), atol=float(os.environ.get("TRAINING_ATOL", "1e-6")))


def batch(step: int, rows: int = 8, width: int = 16):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(rows, width, generator=g), torch.randn(rows, 4, generator=g)


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))


def compare(name: str, got: nn.Module, want: nn.Module) -> None:
    for (n, a), (_, b) in zip(got.named_parameters(), want.named_parameters()):
        a = a.full_tensor() if hasattr(a, "full_tensor") else a
        if not torch.allclose(a.detach().cpu(), b.detach().cpu(), **TOL):
            raise AssertionError(f"{name}: parameter {n} differs by {(a.detach().cpu() - b.detach().cpu()).abs().max()}")
    print(f"ok {name}")


def ddp(rank: int, world: int) -> None:
    reference = mlp()
    model = nn.parallel.DistributedDataParallel(mlp().to(FLAGOS))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    train_steps("ddp", model, opt, reference, ref_opt, rank, world, range(STEPS), batch)


class Block(nn.Module):
    def __init__(self, width: int = 16, heads: int = 2):
        super().__init__()
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm = nn.LayerNorm(width)
        self.ff = nn.Sequential(nn.Linear(width, 32), nn.GELU(), nn.Linear(32, width))

    def forward(self, x):
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return x + self.ff(self.norm(x))


def transformer() -> nn.Module:
    torch.manual_seed(1)
    return nn.Sequential(Block(), Block(), nn.Linear(16, 4))


def sequences(step: int, rows: int = 4):
    g = torch.Generator().manual_seed(200 + step)
    return torch.randn(rows, 5, 16, generator=g), torch.randn(rows, 5, 4, generator=g)


# SGD with momentum, not Adam: Adam's first step is lr * sign(grad), which
# turns rounding noise in a gradient that is mathematically zero (the
# attention key bias) into a full step.
def sharded(model: nn.Module) -> nn.Module:
    from torch.distributed.fsdp import fully_shard
    for block in list(model)[:2]:
        fully_shard(block)
    fully_shard(model)
    return model


def train_steps(name, model, opt, reference, ref_opt, rank, world, steps, data=None):
    """Each step: every rank trains on its share of the batch, the reference on
    all of it; then the parameters are compared."""
    for step in steps:
        x, y = (data or sequences)(step)
        share = x.shape[0] // world
        mine = slice(rank * share, (rank + 1) * share)
        opt.zero_grad()
        nn.functional.mse_loss(model(x[mine].to(FLAGOS)), y[mine].to(FLAGOS)).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.mse_loss(reference(x), y).backward()
        ref_opt.step()
        compare(f"{name} step {step}", getattr(model, "module", model), reference)


def fsdp(rank: int, world: int) -> None:
    reference = transformer()
    model = sharded(transformer().to(FLAGOS))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    train_steps("fsdp", model, opt, reference, ref_opt, rank, world, range(STEPS))


def dcp(rank: int, world: int) -> None:
    import torch.distributed.checkpoint as dcp_api
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    reference = transformer()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    model = sharded(transformer().to(FLAGOS))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_steps("dcp before save", model, opt, reference, ref_opt, rank, world, range(2))
    path = [tempfile.mkdtemp(prefix="flagos-dcp-") if rank == 0 else None]
    dist.broadcast_object_list(path, src=0)
    msd, osd = get_state_dict(model, opt)
    # DCP's default writer moves only the first available device type's
    # tensors to the host, which is cuda where torch also sees CUDA (flagos
    # on the cuda plugin); its multi-threaded writer moves any device's.
    threads = int(os.environ.get("DCP_WRITER_THREADS", "1"))
    writer = dcp_api.FileSystemWriter(path[0], thread_count=threads)
    dcp_api.save({"model": msd, "optim": osd}, storage_writer=writer)
    fresh = sharded(transformer().to(FLAGOS))
    fresh_opt = torch.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.9)
    fsd, fosd = get_state_dict(fresh, fresh_opt)
    state = {"model": fsd, "optim": fosd}
    dcp_api.load(state, checkpoint_id=path[0])
    set_state_dict(fresh, fresh_opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    compare("dcp loaded", fresh, reference)
    train_steps("dcp after load", fresh, fresh_opt, reference, ref_opt, rank, world, range(2, 4))
    dist.barrier()
    if rank == 0:
        shutil.rmtree(path[0])


def main() -> int:
    dist.init_process_group("flagos", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    for check in sys.argv[1:]:
        {"ddp": ddp, "fsdp": fsdp, "dcp": dcp}[check](rank, world)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
