"""Graph-captured batch-1 inference for tools/bench/gpu.py (section
graph-infer): the GPT-2 forward of section (d) captured once and replayed,
with torch.cuda.graph on native CUDA and torch.flagos.graph on flagos (the
same model, tokens and capture recipe: warm-up on a side stream, then one
capture). Needs a GPU: the host plugin's graphs capture only the `native`
route, and its default conf routes GPT-2's operators to the cpu route."""

from __future__ import annotations

import torch

from tools.bench import gpt2


def _module(device: str):
    return torch.cuda if device.startswith("cuda") else torch.flagos


def _capture(device: str, call):
    """`call` warmed up on a side stream, then captured; returns the replay."""
    mod = _module(device)
    side = mod.Stream()
    side.wait_stream(mod.current_stream())
    with torch.no_grad(), mod.stream(side):
        for _ in range(3):
            call()
    mod.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph() if mod is torch.cuda else torch.flagos.FlagosGraph()
    with torch.no_grad(), (torch.cuda.graph(graph) if mod is torch.cuda else torch.flagos.graph(graph)):
        call()
    return graph


def replay(base, length: int, calls: int):
    """Workload: `calls` replays of the captured batch-1 forward."""
    def make(device: str):
        model = gpt2.move(base, device).eval()
        ids = gpt2.tokens(base.config, 1, length, device)
        graph = _capture(device, lambda: model(ids, use_cache=False))

        def run():
            for _ in range(calls):
                graph.replay()
        return run, calls
    return make
