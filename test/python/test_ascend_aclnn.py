"""The ascend plugin's native kernels: aten out= operators served by aclnn
(plugins/cudalike/aclnn), prepared once per operand layout and reused from
the executor cache, on the simulated CANN runtime (test/simrt: libascendcl.so
and libopapi.so, which enforces aclnn's two-phase and workspace rules).
Simulated-runtime results, not hardware results."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT, flagos_lines, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import environment, runtime_option  # noqa: E402

# Every operator the plugin serves through aclnn (plugins/cudalike/aclnn/ops.h).
ACLNN_OPS = ["aten::abs.out", "aten::add.out", "aten::div.out", "aten::exp.out", "aten::mm.out",
             "aten::mul.out", "aten::neg.out", "aten::sub.out"]


def ascend(simrt, **extra: str) -> dict[str, str]:
    # Guard pages: device memory is unreadable at its device address, so a
    # kernel that touched it outside the simulated runtime would crash.
    return environment(simrt, "ascend", SIMRT_GUARD="1", **extra)


def test_every_aclnn_operator_matches_cpu_and_runs_natively(simrt):
    proc = run_python("""
        import torch, torch_fl
        from torch_fl import _C
        print(sorted(s.split("(")[0] for s in _C._plugin_kernel_schemas()))
        torch.manual_seed(0)
        a, b = torch.randn(5, 7), torch.randn(5, 7) + 3
        row = torch.randn(7)
        m1, m2 = torch.randn(5, 3), torch.randn(7, 3)
        i1, i2 = torch.randint(-9, 9, (4, 6)), torch.randint(-9, 9, (4, 6))
        d = lambda t: t.to("flagos")
        cases = {
            "add": (d(a) + d(b), a + b),
            "add_alpha": (torch.add(d(a), d(b), alpha=2.5), torch.add(a, b, alpha=2.5)),
            "add_broadcast": (d(a) + d(row), a + row),
            "sub_alpha": (torch.sub(d(a), d(b), alpha=3), torch.sub(a, b, alpha=3)),
            "mul": (d(a) * d(b), a * b),
            "div": (d(a) / d(b), a / b),
            "neg": (-d(a), -a),
            "abs": (d(a).abs(), a.abs()),
            "exp": (d(a).exp(), a.exp()),
            # mat2 transposed: a strided operand, not a contiguous copy.
            "mm_transposed": (d(m1) @ d(m2).t(), m1 @ m2.t()),
            "add_int64": (d(i1) + d(i2), i1 + i2),
            # k = 0: no storage to point aclnn at; the kernel declines, cpu_fallback answers zeros.
            "mm_empty": (d(torch.ones(5, 0)) @ d(torch.ones(0, 4)), torch.zeros(5, 4)),
            "mul_inplace": (d(a).mul_(d(b)), a * b),
        }
        for name, (got, want) in cases.items():
            assert got.device.type == "flagos", name
            torch.testing.assert_close(got.cpu(), want, msg=name)
        print(sorted(torch_fl.op_cache_stats()))
        print("ok")
    """, env=ascend(simrt, FLAGOS_LOG="fallback"), check=True)
    lines = proc.stdout.splitlines()
    assert eval(lines[0]) == ACLNN_OPS
    assert eval(lines[1]) == ACLNN_OPS  # every kernel prepared at least one executor
    assert lines[-1] == "ok"
    # None of these calls left the device but the empty mm: one cpu_fallback.
    fallbacks = [l for l in flagos_lines(proc.stderr) if "cpu_fallback: aten::" in l and
                 any(op in l for op in ("add", "sub", "mul", "div", "neg", "abs", "exp", "mm"))]
    assert fallbacks == ["[flagos] cpu_fallback: aten::mm"], proc.stderr


def test_repeated_shapes_reuse_the_prepared_executor(simrt):
    proc = run_python("""
        import torch, torch_fl
        x, y = torch.randn(8, 8, device="flagos"), torch.randn(8, 8, device="flagos")
        for _ in range(5):
            z = x + y                    # the same layout five times: one preparation
        w = torch.randn(3, 8, device="flagos") + torch.randn(3, 8, device="flagos")  # a new layout
        s = torch_fl.op_cache_stats()["aten::add.out"]
        torch.testing.assert_close(z.cpu(), x.cpu() + y.cpu())
        print(s["hits"], s["misses"])
    """, env=ascend(simrt), check=True)
    assert proc.stdout.split() == ["4", "2"]


def test_op_cache_log_prints_the_statistics_at_exit(simrt):
    proc = run_python("""
        import torch
        a = torch.randn(4, 4, device="flagos")
        for _ in range(3):
            b = a @ a
        b.cpu()
    """, env=ascend(simrt, FLAGOS_LOG="op_cache"), check=True)
    lines = flagos_lines(proc.stderr)
    assert "[flagos] op_cache: aten::mm.out: 2 hits, 1 misses" in lines, proc.stderr
    assert any(l.startswith("[flagos] op_cache: all kernels: ") for l in lines), proc.stderr


def test_op_cache_log_says_when_the_plugin_keeps_no_cache(simrt):
    proc = run_python("import torch, torch_fl", env={"FLAGOS_PLUGIN": "host", "FLAGOS_LOG": "op_cache"},
                      check=True)
    assert "[flagos] op_cache: plugin host has no native kernel that keeps an operator cache" in \
        flagos_lines(proc.stderr), proc.stderr


def test_operands_aclnn_refuses_take_the_next_route(simrt):
    # The simulated aclnn computes float32 and int64 only: float64 is refused
    # at preparation, before anything is written, and cpu_fallback serves it.
    proc = run_python("""
        import torch, torch_fl
        a = torch.randn(6, dtype=torch.float64)
        for _ in range(2):
            got = (a.to("flagos") + a.to("flagos")).cpu()
        torch.testing.assert_close(got, a + a)
        print(torch_fl.op_cache_stats().get("aten::add.out"))
    """, env=ascend(simrt, FLAGOS_LOG="fallback"), check=True)
    assert proc.stdout.strip() == "{'hits': 0, 'misses': 0}"  # a refusal prepares no executor
    assert "[flagos] cpu_fallback: aten::add.out" in flagos_lines(proc.stderr) or \
        "[flagos] cpu_fallback: aten::add.Tensor" in flagos_lines(proc.stderr), proc.stderr


def test_without_the_operator_library_every_op_takes_the_next_route(simrt):
    # The runtime named directly and no ASCEND_HOME: libascendcl.so loads,
    # libopapi.so is nowhere to be found, and the kernels decline.
    env = environment(simrt, "ascend", FLAGOS_PLUGIN_OPTIONS=runtime_option(simrt, "ascend"))
    env.pop("ASCEND_HOME")
    proc = run_python("""
        import torch, torch_fl
        a, b = torch.randn(3, 4), torch.randn(4, 2)
        torch.testing.assert_close((a.to("flagos") @ b.to("flagos")).cpu(), a @ b)
        print(torch_fl.op_cache_stats()["aten::mm.out"])
    """, env=env, check=True)
    assert proc.stdout.strip() == "{'hits': 0, 'misses': 0}"


def test_a_training_step_on_aclnn_matches_cpu(simrt):
    # Linear layers' matmuls, adds and muls through aclnn, the rest on
    # cpu_fallback: the gradients of one SGD step agree with the CPU's.
    proc = run_python("""
        import torch, torch_fl
        torch.manual_seed(0)
        cpu = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
        dev = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
        dev.load_state_dict(cpu.state_dict()); dev.to("flagos")
        x, y = torch.randn(32, 8), torch.randn(32, 2)
        for model, xs, ys in ((cpu, x, y), (dev, x.to("flagos"), y.to("flagos"))):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad(); ((model(xs) - ys) ** 2).mean().backward(); opt.step()
        for p, q in zip(cpu.parameters(), dev.parameters()):
            torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-5, atol=1e-6)
        s = torch_fl.op_cache_stats()
        print(sum(v["hits"] for v in s.values()) > 0)
    """, env=ascend(simrt), check=True)
    assert proc.stdout.strip() == "True"


def test_out_sharing_memory_with_an_input_is_declined_not_miscomputed(simrt):
    # An in-place form (out is self, element for element) stays on aclnn; an
    # out= that partly overlaps an input is declined, and the next route
    # answers as the CPU does (here: torch's own partial-overlap error).
    proc = run_python("""
        import torch, torch_fl
        a = torch.arange(10.)
        x = a.to("flagos")
        x.add_(x)
        torch.testing.assert_close(x.cpu(), a + a)
        def attempt(t):
            try:
                torch.add(t[:-1], t[1:], out=t[1:])
                return t.cpu().tolist()
            except RuntimeError as e:
                return type(e).__name__ + ": " + str(e).split("\\n")[0][:60]
        print(attempt(a.clone()) == attempt(a.clone().to("flagos")))
        print(torch_fl.op_cache_stats()["aten::add.out"])
    """, env=ascend(simrt), check=True)
    lines = proc.stdout.splitlines()
    assert lines[0] == "True", proc.stdout + proc.stderr
    assert lines[1] == "{'hits': 0, 'misses': 1}"  # the in-place add alone reached aclnn
