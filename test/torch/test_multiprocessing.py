"""Flagos tensors between processes (torch_fl.multiprocessing,
docs/multiprocessing.md): torch.multiprocessing queues, mp.spawn arguments
and DataLoader workers hand over the same device memory, so writes on one
side are seen on the other; a plugin that cannot share says so when the
tensor is pickled. Children are spawned (a forked child cannot use flagos)."""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import pytest
import torch

from conftest import PLUGIN


@pytest.mark.host_plugin
def test_queue_round_trip_shares_memory_both_ways(run_flagos):
    out = run_flagos("""
        import torch.multiprocessing as mp

        def child(inbox, outbox):
            x, y = inbox.get()
            seen = [str(x.device), x.storage_offset(), x.cpu().tolist(), str(y.device), y.cpu().tolist()]
            x.add_(10)  # into the parent's memory
            torch.flagos.synchronize()
            z = torch.arange(3.0, device="flagos") * 7  # made here, read by the parent
            outbox.put((seen, z, x))  # x goes back as it came: the parent's own storage
            inbox.get()  # the parent has read z

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            inbox, outbox = ctx.Queue(), ctx.Queue()
            base = torch.arange(8.0, device="flagos")
            x = base[2:6]
            last = torch.flagos.device_count() - 1
            y = torch.full((3,), 5, dtype=torch.int32, device=f"flagos:{last}")
            p = ctx.Process(target=child, args=(inbox, outbox))
            p.start()
            inbox.put((x, y))
            seen, z, back = outbox.get(timeout=120)
            print("child saw:", seen)
            print("x came home:", back.data_ptr() == x.data_ptr())
            print("parent base:", base.cpu().tolist())
            print("z:", str(z.device), z.cpu().tolist())
            inbox.put("done")
            p.join(60)
            print("exit:", p.exitcode)
            print("z after the child exited:", (z + 1).cpu().tolist())
    """)
    last = torch.flagos.device_count() - 1
    assert f"child saw: ['flagos:0', 2, [2.0, 3.0, 4.0, 5.0], 'flagos:{last}', [5, 5, 5]]" in out
    assert "parent base: [0.0, 1.0, 12.0, 13.0, 14.0, 15.0, 6.0, 7.0]" in out
    assert "z: flagos:0 [0.0, 7.0, 14.0]" in out
    assert "x came home: True" in out
    assert "exit: 0" in out
    # The host plugin's shared memory lives as long as any process maps it.
    assert "z after the child exited: [1.0, 8.0, 15.0]" in out


@pytest.mark.host_plugin
def test_spawn_arguments_and_dataloader_workers(run_flagos):
    out = run_flagos("""
        import torch.multiprocessing as mp
        from torch.utils.data import DataLoader, Dataset

        def fill(rank, t):
            t.copy_(torch.tensor([4.0, 5.0, 6.0]))
            torch.flagos.synchronize()

        class OnFlagos(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return torch.full((2,), float(i), device="flagos")

        if __name__ == "__main__":
            t = torch.zeros(3, device="flagos")
            mp.spawn(fill, args=(t,), nprocs=1)
            print("spawn:", t.cpu().tolist())
            loader = DataLoader(OnFlagos(), batch_size=2, num_workers=1, multiprocessing_context="spawn")
            print("batches:", [(str(b.device), b.cpu().tolist()) for b in loader])
    """)
    assert "spawn: [4.0, 5.0, 6.0]" in out
    assert ("batches: [('flagos:0', [[0.0, 0.0], [1.0, 1.0]]), ('flagos:0', [[2.0, 2.0], [3.0, 3.0]])]"
            in out)


@pytest.mark.host_plugin
def test_pickling_in_one_process_keeps_one_storage():
    base = torch.arange(6.0, device="flagos")
    view = base[1:4]
    back = ForkingPickler.loads(ForkingPickler.dumps(view))
    # The first send moves the storage into shareable memory; every tensor on
    # it follows, and unpickling at home gives the same storage back.
    assert back.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert (back.storage_offset(), back.shape) == (1, torch.Size([3]))
    back.mul_(2)
    assert base.cpu().tolist() == [0.0, 2.0, 4.0, 6.0, 4.0, 5.0]
    moved = base.untyped_storage().data_ptr()
    again = ForkingPickler.loads(ForkingPickler.dumps(base))  # a second send moves nothing
    assert base.untyped_storage().data_ptr() == moved == again.untyped_storage().data_ptr()
    assert torch.equal(again.cpu(), base.cpu())


def test_a_plugin_that_cannot_share_says_so(run_flagos):
    code = """
        from multiprocessing.reduction import ForkingPickler
        t = torch.ones(4, device="flagos")
        try:
            ForkingPickler.dumps(t)
            print("pickled")
        except RuntimeError as e:
            print(str(e).splitlines()[0])
        print("still usable:", (t + 1).cpu().tolist())
    """
    if PLUGIN["name"] == "host":
        out = run_flagos(code, options={"ipc": "0"})
        assert ("[flagos] plugin 'host' cannot share device memory between processes "
                "(no FLAGOS_EXTENSION_IPC): send flagos tensors to other processes as CPU "
                "tensors (tensor.cpu())") in out
    else:
        out = run_flagos(code)
        first = out.splitlines()[0]
        assert first == "pickled" or (first.startswith("[flagos]") and "share" in first), out
    assert "still usable: [2.0, 2.0, 2.0, 2.0]" in out
