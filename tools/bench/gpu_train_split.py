"""GPT-2-small training step (batch 8, seq 512, bf16 autocast, AdamW), native
cuda and flagos timed in separate processes of one run.

Why separate: in a process that imports torch_fl, torch 2.11 makes flagos the
accelerator, and its autograd engine then asserts on native CUDA tensors'
backward (engine.cpp: opt_ready_stream && opt_parent_stream); the in-process
comparison of tools.bench.gpu cannot run the native side there.

    python3 -m tools.bench.gpu_train_split            (parent: runs both, prints ms/step)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time


def child(device: str, steps: int, repeats: int) -> None:
    import torch

    if device == "flagos":
        import torch_fl  # noqa: F401
    from tools.bench import gpt2

    cfg = gpt2.config(False)
    run, n = gpt2.train_step(gpt2.build(cfg), 8, 512, steps)(device)
    sync = torch.cuda.synchronize if device == "cuda" else torch.flagos.synchronize
    run()  # warm-up: allocator, kernels, optimizer state
    sync()
    times = []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        run()
        sync()
        times.append((time.perf_counter() - t) / n * 1e3)
    print(json.dumps({"device": device, "ms_per_step": statistics.median(times), "all": times}))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    results = {}
    for device in ("cuda", "flagos", "cuda"):  # native before and after: drift shows
        out = subprocess.run([sys.executable, "-m", "tools.bench.gpu_train_split", "--child", device, "3", "5"],
                             capture_output=True, text=True, env=dict(os.environ), timeout=300)
        line = [l for l in out.stdout.splitlines() if l.startswith("{")]
        if out.returncode or not line:
            print(f"{device}: failed\n{out.stderr[-2000:]}")
            return 1
        r = json.loads(line[-1])
        results.setdefault(device, []).append(r["ms_per_step"])
        print(f"{device}: {r['ms_per_step']:.1f} ms/step ({', '.join(f'{t:.1f}' for t in r['all'])})", flush=True)
    native = statistics.mean(results["cuda"])
    print(f"flagos/native = {results['flagos'][0] / native:.3f} (target <= 1.03)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
