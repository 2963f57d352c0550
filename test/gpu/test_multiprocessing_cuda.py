"""Flagos tensors between processes on the cuda plugin (docs/multiprocessing.md):
the runtime's IPC handles of the caching allocator's segments, two processes
on one GPU. The script below runs as a file so that "spawn" can re-import it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

SCRIPT = textwrap.dedent("""
    import os
    os.environ.setdefault("FLAGOS_ALIAS_CUDA", "0")
    import torch
    import torch.multiprocessing as mp
    import torch_fl

    def child(inbox, outbox):
        x, big = inbox.get()
        seen = [str(x.device), x.storage_offset(), x.cpu().tolist(), float(big.sum().item())]
        x.mul_(-1)  # into the parent's memory
        big.add_(1)
        torch.flagos.synchronize()
        z = torch.arange(5.0, device="flagos") + 100  # made here, read by the parent
        outbox.put((seen, z))
        inbox.get()  # the parent has read z: it stays allocated until then

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        inbox, outbox = ctx.Queue(), ctx.Queue()
        pad = torch.empty(1000, device="flagos")  # x's storage does not start its segment
        base = torch.arange(16.0, device="flagos")
        x = base[3:7]
        big = torch.zeros(1 << 22, device="flagos")  # a large-pool segment of its own
        p = ctx.Process(target=child, args=(inbox, outbox))
        p.start()
        inbox.put((x, big))
        seen, z = outbox.get(timeout=240)
        print("child saw:", seen)
        print("parent x:", x.cpu().tolist(), "big:", float(big.sum().item()))
        print("z:", str(z.device), z.cpu().tolist())
        inbox.put("done")
        p.join(120)
        print("exit:", p.exitcode)
""")


def test_cuda_ipc_round_trip(tmp_path):
    script = tmp_path / "ipc_round_trip.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=400,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "child saw: ['flagos:0', 3, [3.0, 4.0, 5.0, 6.0], 0.0]" in out, out + proc.stderr
    assert f"parent x: [-3.0, -4.0, -5.0, -6.0] big: {float(1 << 22)}" in out, out
    assert "z: flagos:0 [100.0, 101.0, 102.0, 103.0, 104.0]" in out, out
    assert "exit: 0" in out, out
