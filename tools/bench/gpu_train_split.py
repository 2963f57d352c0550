"""GPT-2-small training step (batch 8, seq 512, bf16 autocast, AdamW), native
cuda and flagos timed in separate processes of one run: section (c) of
tools.bench.gpu, also runnable alone.

Why separate: in a process that imports torch_fl, torch 2.11 makes flagos the
accelerator, and its autograd engine then asserts on native CUDA tensors'
backward (engine.cpp: opt_ready_stream && opt_parent_stream); the in-process
interleaving of tools/bench/timing.py cannot run the native side there.
Instead the two sides alternate as whole processes, ABBA (native, flagos,
flagos, native, ...), so drift over the run hits both alike. The flagos
children run with FLAGOS_LOG=fallback: operators that left the device are
reported.

    python3 -m tools.bench.gpu_train_split [ROUNDS]    (prints ms/step and the ratio)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

BATCH, SEQ, STEPS, REPEATS = 8, 512, 3, 5


def child(device: str, steps: int, repeats: int, profile: bool) -> None:
    import torch

    if device == "flagos":
        import torch_fl  # noqa: F401
    from tools.bench import gpt2

    cfg = gpt2.config(False)
    run, n = gpt2.train_step(gpt2.build(cfg), BATCH, SEQ, steps)(device)
    sync = torch.get_device_module(device).synchronize
    run()  # warm-up: allocator, kernels, optimizer state
    sync()
    times = []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        run()
        sync()
        times.append((time.perf_counter() - t) / n)
    result = {"device": device, "s_per_step": statistics.median(times), "all": times}
    if profile:  # after the timing, like the census: the profiler slows the step
        from tools.bench import op_profile

        result["ops"] = op_profile.self_cpu_by_op(run)
    if device == "flagos":  # after the timing: the dispatch mode slows the step it watches
        result["census"] = gpt2.census_note(gpt2.route_census(run))
    print(json.dumps(result))


def _one(device: str, timeout: float, profile: bool) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tools.bench.gpu_train_split", "--child", device,
                           str(STEPS), str(REPEATS), str(int(profile))],
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode or not lines:
        raise RuntimeError(f"[flagos] GPT-2 training child on {device} failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}")
    return json.loads(lines[-1])


def measure(rounds: int = 2, timeout: float = 240) -> dict:
    """Seconds per step on each side (medians over child processes, keyed
    like timing.compare: "cuda_s", "flagos_s"), the ratio, each process's
    median in run order ("rounds"), the routes the flagos side's operators
    took (a census note) and, from the first round's two processes, host
    time by ATen operator (an op_profile note)."""
    times: dict[str, list[float]] = {"cuda": [], "flagos": []}
    order, census, ops = [], "", {}
    for r in range(rounds):
        for device in (("cuda", "flagos") if r % 2 == 0 else ("flagos", "cuda")):
            result = _one(device, timeout, profile=r == 0)
            times[device].append(result["s_per_step"])
            order.append(f"{device} {result['s_per_step'] * 1e3:.1f}")
            census = result.get("census", census)
            if "ops" in result:
                ops[device] = {op: tuple(v) for op, v in result["ops"].items()}
            print(f"    {device}: {result['s_per_step'] * 1e3:.1f} ms/step", file=sys.stderr, flush=True)
    out = {f"{dev}_s": statistics.median(t) for dev, t in times.items()}
    out.update(ratio=out["flagos_s"] / out["cuda_s"], repeats=rounds * REPEATS, census=census,
               rounds="ms/step per process, in run order: " + ", ".join(order))
    if len(ops) == 2:
        from tools.bench import op_profile

        out["op_profile"] = op_profile.note_from(ops, "cuda", top=10)
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:6] == ["1"])
        return 0
    r = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    print(f"native cuda {r['cuda_s'] * 1e3:.1f} ms/step, flagos {r['flagos_s'] * 1e3:.1f} ms/step: "
          f"flagos/native = {r['ratio']:.3f} (target <= 1.03)")
    print(r["census"])
    print(r["rounds"])
    print(r.get("op_profile", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
