"""torch.compile on flagos with the host plugin: Inductor's CPU C++ codegen on
zero-copy host views (docs/compile.md), the "flagos" backend, and the
compile variables of the spec."""

from __future__ import annotations

import copy
import sys
import warnings

import pytest
import torch

import torch_fl  # noqa: F401  (the flagos device)
from conftest import ROOT, cpp_codegen_only, flagos_lines, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import environment  # noqa: E402

pytestmark = cpp_codegen_only()


class Block(torch.nn.Module):
    """A pre-norm transformer block: attention (SDPA inside) and an MLP."""

    def __init__(self, d: int = 32, heads: int = 4):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def test_dynamo_device_interface_answers_from_torch_flagos():
    from torch._dynamo.device_interface import get_interface_for_device
    iface = get_interface_for_device("flagos")
    assert iface.device_count() == torch.flagos.device_count() and iface.is_available()
    assert iface.current_device() == torch.flagos.current_device()
    assert iface.exchange_device(1) == 0 and iface.exchange_device(0) == 1
    assert iface.is_bf16_supported() is True and iface.memory_allocated() == torch.flagos.memory_allocated()
    assert iface.get_device_properties(0).name == torch.flagos.get_device_properties(0).name
    assert iface.get_raw_stream(0) == 0  # no native stream on the host
    assert not iface.is_triton_capable() and iface.get_compute_capability() == ""
    with pytest.raises(RuntimeError, match=r"\[flagos\] no Triton codegen for flagos here; plugin 'host': Inductor's CPU C\+\+"):
        iface.raise_if_triton_unavailable()
    with iface.device(1):
        assert iface.current_device() == 1
    iface.synchronize()


def test_default_compile_of_an_mlp_matches_eager_and_returns_flagos_tensors():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).to("flagos")
    x = torch.randn(32, 16, device="flagos")
    out = torch.compile(mlp)(x)
    assert out.device.type == "flagos"
    torch.testing.assert_close(out.cpu(), mlp(x).cpu())


def test_a_compiled_function_that_moves_cpu_inputs_to_flagos():
    # No flagos input: the graph's own values (Dynamo's example values) name
    # the device, and a train step that moves its batch compiles.
    step = torch.compile(lambda batch, w: (batch.to("flagos") @ w).relu().sum(), fullgraph=True)
    batch, w = torch.randn(4, 3), torch.randn(3, 2)
    out = step(batch, w.to("flagos"))
    assert out.device.type == "flagos"
    torch.testing.assert_close(out.cpu(), (batch @ w).relu().sum())


def test_results_are_flagos_memory_not_copies():
    # An output that is a view of an input shares the input's flagos storage.
    x = torch.randn(8, 8, device="flagos")
    t = torch.compile(lambda a: (a.t(), a * 2))(x)
    assert t[0].device.type == "flagos" and t[0].data_ptr() == x.data_ptr()
    assert t[1].device.type == "flagos" and t[1].untyped_storage().device.type == "flagos"


def test_compiled_code_sees_queued_device_work():
    # The host plugin runs streams on worker threads: a compiled graph must
    # read what eager work queued before it wrote.
    x = torch.zeros(1 << 16, device="flagos")
    f = torch.compile(lambda a: a + 1)
    for i in range(5):
        x.add_(1)  # queued on the flagos stream
        y = f(x)
        assert y.sum().item() == (i + 2) * (1 << 16)


def test_transformer_training_with_adamw_matches_cpu():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(Block(), Block())
    model = copy.deepcopy(ref).to("flagos")
    opt, opt_ref = (torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (model, ref))
    step = torch.compile(model, backend="flagos")
    for _ in range(3):
        x = torch.randn(2, 8, 32)
        loss = step(x.to("flagos")).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        loss_ref = ref(x).square().mean()
        loss_ref.backward()
        opt_ref.step()
        opt_ref.zero_grad()
        torch.testing.assert_close(loss.cpu(), loss_ref, rtol=1e-4, atol=1e-5)
    # Adam moves a parameter whose gradient is ~0 by ~lr either way, so
    # summation-order noise in such gradients shows at the scale of lr.
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.cpu(), q, rtol=0, atol=3e-3)


def test_traced_attention_takes_the_fused_kernel_eager_takes():
    # Under tracing the operands are fake: the choice must still be the CPU
    # kernel's (flash attention), not the math decomposition a fake CPU
    # tensor's Meta kernel answers.
    from torch._dynamo.backends.common import aot_autograd
    graphs = []

    def keep(gm, _):
        graphs.append(str(gm.graph))
        return gm.forward

    q = torch.randn(1, 4, 16, 32, device="flagos", requires_grad=True)
    mask = torch.zeros(1, 1, 16, 16, device="flagos")

    def attend(q):
        return torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask).sum()

    torch.compile(attend, backend=aot_autograd(fw_compiler=keep, bw_compiler=keep))(q).backward()
    forward, backward = graphs
    assert "_scaled_dot_product_flash_attention_for_cpu" in forward and "bmm" not in forward, forward
    assert "_scaled_dot_product_flash_attention_for_cpu_backward" in backward, backward


def test_flagos_matmuls_take_inductors_padding_pass():
    """The Triton path lets pad_mm pad flagos matmuls as it pads CUDA ones
    (an unaligned GPT-2 head otherwise takes an alignment-1 cuBLAS kernel)."""
    from torch._inductor.fx_passes import pad_mm
    from torch_fl.compile import triton_codegen

    original = pad_mm.check_device
    try:
        triton_codegen._pad_matmuls_like_cuda()
        patched = pad_mm.check_device
        triton_codegen._pad_matmuls_like_cuda()
        assert pad_mm.check_device is patched  # installed once
        a = torch.ones(2, 2, device="flagos")
        assert pad_mm.check_device(a, a)
        assert not pad_mm.check_device(a.cpu(), a.cpu()) and not pad_mm.check_device(a, a.cpu())
    finally:
        pad_mm.check_device = original


def test_flagos_templates_take_inductors_cuda_tuning_tables():
    """The Triton path gives flagos the block sizes Inductor tuned for CUDA
    GPUs (flex attention's backward otherwise runs 16x16 generic blocks)."""
    from torch._inductor import choices
    from torch._inductor.template_heuristics import registry
    from torch._inductor.template_heuristics.triton import BaseConfigHeuristic, CUDAConfigHeuristic
    from torch_fl.compile import triton_codegen

    original = choices.InductorChoices.get_config_heuristics
    table = dict(registry._TEMPLATE_HEURISTIC_REGISTRY)
    try:
        triton_codegen._tune_templates_like_cuda()
        patched = choices.InductorChoices.get_config_heuristics
        triton_codegen._tune_templates_like_cuda()
        assert choices.InductorChoices.get_config_heuristics is patched  # installed once
        ours = choices.InductorChoices()
        assert type(ours.get_config_heuristics("flagos")) is CUDAConfigHeuristic
        assert type(ours.get_config_heuristics("cpu")) is not CUDAConfigHeuristic
        assert type(ours.get_config_heuristics("other")) is BaseConfigHeuristic
        cuda_rows = {(t, o): c for (t, d, o), c in registry._TEMPLATE_HEURISTIC_REGISTRY.items() if d == "cuda"}
        assert cuda_rows and all(registry.get_registered_heuristic_class(t, "flagos", o) is c
                                 for (t, o), c in cuda_rows.items())
    finally:
        choices.InductorChoices.get_config_heuristics = original
        registry._TEMPLATE_HEURISTIC_REGISTRY.clear()
        registry._TEMPLATE_HEURISTIC_REGISTRY.update(table)
        registry._HEURISTIC_CACHE.clear()


def test_dynamic_shapes_compile_once():
    from torch._dynamo.testing import CompileCounterWithBackend
    counter = CompileCounterWithBackend("flagos")
    f = torch.compile(lambda a: torch.nn.functional.silu(a).cumsum(0), backend=counter, dynamic=True)
    for n in (5, 9, 17):
        x = torch.randn(n, 3, device="flagos")
        torch.testing.assert_close(f(x).cpu(), torch.nn.functional.silu(x.cpu()).cumsum(0))
    assert counter.frame_count == 1


def test_a_graph_break_runs_both_graphs():
    def f(a):
        b = a.relu() + 1
        torch._dynamo.graph_break()
        return b * 2
    x = torch.randn(16, device="flagos")
    explanation = torch._dynamo.explain(f)(x)
    assert explanation.graph_count == 2
    torch.testing.assert_close(torch.compile(f)(x).cpu(), (x.cpu().relu() + 1) * 2)


def test_compiled_dropout_draws_from_the_flagos_generator():
    f = torch.compile(lambda a: torch.nn.functional.dropout(a, 0.5, training=True))
    x = torch.ones(4096, device="flagos")
    torch.flagos.manual_seed(7)
    first = f(x).cpu()
    torch.flagos.manual_seed(7)
    torch.testing.assert_close(f(x).cpu(), first)
    assert 0.4 < (first == 0).float().mean().item() < 0.6


# FLAGOS_COMPILE_FALLBACK_EAGER -----------------------------------------------

@torch.library.custom_op("flagos_test::device_only", mutates_args=())
def _device_only(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@_device_only.register_fake
def _(x):
    # Stands for an operator the cpp codegen path cannot take: its meta
    # function refuses a CPU graph.
    if x.device.type != "flagos":
        raise NotImplementedError("device_only has no CPU implementation")
    return torch.empty_like(x)


def uses_device_only(a):
    return torch.ops.flagos_test.device_only(a.sin()) * 2


def test_without_the_fallback_switch_the_codegen_error_surfaces(monkeypatch):
    monkeypatch.delenv("FLAGOS_COMPILE_FALLBACK_EAGER", raising=False)
    with pytest.raises(Exception, match="device_only"):
        torch.compile(uses_device_only)(torch.randn(4, device="flagos"))


def test_the_fallback_switch_runs_the_graph_eagerly_with_one_warning(monkeypatch):
    monkeypatch.setenv("FLAGOS_COMPILE_FALLBACK_EAGER", "1")
    x = torch.randn(4, device="flagos")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = torch.compile(uses_device_only)(x)
    torch.testing.assert_close(out.cpu(), (x.cpu().sin() + 1) * 2)
    lines = [str(w.message) for w in seen if str(w.message).startswith("[flagos]")]
    assert len(lines) == 1 and "flagos_test.device_only" in lines[0], lines


# Plugins, variables ----------------------------------------------------------

def test_a_plugin_without_codegen_runs_compiled_functions_eagerly_and_says_so():
    proc = run_python("""
        import warnings, torch, torch_fl
        warnings.simplefilter("always")
        f = torch.compile(lambda a: a * 2 + 1)
        x = torch.arange(4.0, device="flagos")
        print(f(x).cpu().tolist(), f(x).cpu().tolist())
    """, env={"FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "strict=1"}, check=True)
    assert proc.stdout.strip() == "[1.0, 3.0, 5.0, 7.0] [1.0, 3.0, 5.0, 7.0]"
    said = [line for line in proc.stderr.splitlines() if "[flagos] torch.compile" in line]
    assert len(said) == 1 and "neither CUDA-ABI nor host-addressable" in said[0], proc.stderr


def test_use_flagtree_refuses_a_triton_that_is_not_flagtree():
    proc = run_python("""
        import torch, torch_fl
        try:
            torch.compile(lambda a: a + 1)(torch.ones(2, device="flagos"))
        except Exception as e:
            print(next(line for line in str(e).splitlines() if "[flagos]" in line))
    """, env={"FLAGOS_USE_FLAGTREE": "1"}, check=True)
    assert "FLAGOS_USE_FLAGTREE=1, but" in proc.stdout and "FlagTree" in proc.stdout, proc.stdout


PINS = """
    import os, torch, torch_fl
    exported = os.environ.get("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"), os.environ.get("TORCHINDUCTOR_COMPILE_THREADS")
    import torch._inductor.config as c
    print(exported, c.use_static_cuda_launcher, c.compile_threads)
"""


def test_static_launcher_is_pinned_off_on_a_torch_without_it():
    assert not hasattr(torch._C, "_StaticCudaLauncher")  # the CPU wheel CI runs
    out = run_python(PINS, check=True).stdout.split()
    assert out[:2] == ["('0',", "None)"] and out[2] == "False", out
    out = run_python(PINS, env={"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": "1"}, check=True).stdout.split()
    assert out[0] == "('1',", out  # an explicit export wins


@pytest.mark.parametrize("vendor,pinned", [("ppu", True), ("musa", True), ("metax", False)])
def test_compile_threads_pinned_to_one_on_vendors_whose_compilers_must_not_fork(simrt, vendor, pinned):
    out = run_python(PINS, env=environment(simrt, vendor), check=True).stdout.split()
    assert (out[1] == "'1')" and out[3] == "1") if pinned else out[1] == "None)", out
    if pinned:
        out = run_python(PINS, env=environment(simrt, vendor, TORCHINDUCTOR_COMPILE_THREADS="4"), check=True)
        assert out.stdout.split()[3] == "4", out.stdout
