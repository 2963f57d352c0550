"""GPT-2 workloads for tools/bench/gpu.py: a training step and batch-1
inference of a Hugging Face transformers GPT-2 built from a config with random
weights (nothing is downloaded). The weights are initialised once on the CPU
and copied to each device, so both sides run the same model on the same
tokens."""

from __future__ import annotations

import copy

import torch

SEED = 0


def config(dry_run: bool):
    """GPT-2 small (GPT2Config() defaults: 12 layers, 768 wide, vocab 50257),
    or a tiny one for --dry-run."""
    from transformers import GPT2Config

    if dry_run:
        return GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=128,
                          bos_token_id=0, eos_token_id=0)
    return GPT2Config()


def build(cfg) -> torch.nn.Module:
    from transformers import GPT2LMHeadModel

    torch.manual_seed(SEED)
    return GPT2LMHeadModel(cfg)


def move(model: torch.nn.Module, device: str) -> torch.nn.Module:
    """A copy of `model` on `device`, with its tied weights still tied.

    Module.to() keeps a Parameter object only when c10 says the old and new
    tensors are shallow-copy compatible, and its list of dense backends has
    no PrivateUse1: on flagos every parameter becomes a new object and
    lm_head.weight stops being transformer.wte.weight (an extra 38M-parameter
    matrix in the optimizer). tie_weights() restores the sharing; the count
    check proves both sides train the same parameters."""
    count = sum(p.numel() for p in model.parameters())
    moved = copy.deepcopy(model).to(device)
    moved.tie_weights()
    moved_count = sum(p.numel() for p in moved.parameters())
    if moved_count != count:
        raise RuntimeError(f"[flagos] GPT-2 on {device} has {moved_count} parameters, {count} on the CPU")
    return moved


def tokens(cfg, batch: int, seq: int, device: str) -> torch.Tensor:
    g = torch.Generator().manual_seed(SEED)
    return torch.randint(0, cfg.vocab_size, (batch, seq), generator=g).to(device)


def train_step(base: torch.nn.Module, batch: int, seq: int, steps: int, compiled: bool = False):
    """Forward with labels, backward, AdamW step, under bf16 autocast;
    `compiled`: the model torch.compile'd (default Inductor), which the first
    call (the timing's warm-up) compiles."""
    def make(device: str):
        model = move(base, device).train()
        call = torch.compile(model) if compiled else model
        ids = tokens(base.config, batch, seq, device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def run():
            for _ in range(steps):
                with torch.autocast(device_type=device, dtype=torch.bfloat16):
                    loss = call(ids, labels=ids).loss
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return run, steps
    return make


def forward(base: torch.nn.Module, length: int, calls: int, compiled: bool = False):
    """One no-grad forward over a batch-1 prompt of `length` tokens (`compiled`:
    as for train_step)."""
    def make(device: str):
        model = move(base, device).eval()
        call = torch.compile(model) if compiled else model
        ids = tokens(base.config, 1, length, device)

        def run():
            with torch.no_grad():
                for _ in range(calls):
                    call(ids, use_cache=False)
        return run, calls
    return make


def decode(base: torch.nn.Module, prompt: int, new: int):
    """Greedy decoding of `new` tokens with the KV cache after a `prompt`-token
    prefill, batch 1, no host synchronisation inside (argmax stays on the
    device): one unit is the whole generation."""
    def make(device: str):
        model = move(base, device).eval()
        ids = tokens(base.config, 1, prompt, device)

        def run():
            with torch.no_grad():
                out = model(ids, use_cache=True)
                for _ in range(new - 1):
                    nxt = out.logits[:, -1:].argmax(-1)
                    out = model(nxt, past_key_values=out.past_key_values, use_cache=True)
        return run, 1
    return make


def sdpa_path(device: str, dtype: torch.dtype, heads: int = 12, length: int = 32) -> list[str]:
    """The ATen operators scaled_dot_product_attention reaches on `device`:
    a fused kernel (_scaled_dot_product_flash_attention, ...) or the math
    decomposition (bmm, _softmax, ...). Recorded beside the GPT-2 rows, since
    the two paths differ in time and memory."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[str] = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.name().split("::", 1)[-1]
            if name not in seen:
                seen.append(name)
            return func(*args, **(kwargs or {}))

    q = torch.randn(1, heads, length, 64, dtype=dtype, device=device)
    with torch.no_grad(), Record():
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    return seen


def route_census(run) -> dict[str, list[str]]:
    """Route kind -> the ATen operators one call of `run` reaches on flagos
    through it (torch_fl.routes; "core" for the core's own kernels): shows,
    beside the timings, whether anything left the device (cpu_fallback)."""
    import torch_fl
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    builtin = set(torch_fl._C._builtin_ops())
    seen: set[str] = set()

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if any(isinstance(t, torch.Tensor) and t.device.type == "flagos" for t in tree_leaves((args, kwargs))):
                seen.add(func.name().split("::", 1)[-1].removesuffix(".default"))
            return func(*args, **(kwargs or {}))

    with Record():
        run()
    census: dict[str, list[str]] = {}
    for op in sorted(seen):
        route = "core" if op in builtin else torch_fl.routes(op)[0]["route"]
        route = "composite view" if route == "n/a" else route
        census.setdefault(route, []).append(op)
    return census


def census_note(census: dict[str, list[str]]) -> str:
    parts = [f"{route} {len(ops)}" for route, ops in sorted(census.items())]
    slow = census.get("cpu_fallback", [])
    return ("flagos routes reached: " + ", ".join(parts) +
            ("; through the CPU fallback: " + ", ".join(slow) if slow else "; nothing through the CPU fallback"))
