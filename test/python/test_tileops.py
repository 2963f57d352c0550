"""The `tileops` route (docs/routing.md, "TileOps"): how a call becomes a
TileOps call (two tiers, bounded cache, declined calls), and what happens
where TileOps cannot run. TileOps' kernels need an SM90 GPU; they are tested
on one by test/gpu/test_tileops_cuda.py. Here the op classes are stand-ins
with TileOps' shape: an op layer that fetches a kernel per call spec."""

from __future__ import annotations

import json
import tomllib

import pytest
import torch

from conftest import ROOT, flagos_lines, run_python

from torch_fl.tileops import calls, table  # noqa: E402


class Kernel:
    def __init__(self, fn):
        self.fn, self.runs = fn, 0

    def __call__(self, *tensors):
        self.runs += 1
        return self.fn(*tensors)


class UnaryOp:
    """TileOps' UnaryOp shape: forward fetches the kernel for the call spec
    and returns what it returns."""

    layer_calls = 0

    def __init__(self, **params):
        self.params = params
        self.kernels: dict = {}

    def kernel_for(self, interface, spec):
        key = spec()
        if key not in self.kernels:
            self.kernels[key] = Kernel(lambda x: torch.exp(x) * self.params.get("scale", 1))
        return self.kernels[key]

    def __call__(self, x):
        type(self).layer_calls += 1
        x = x.contiguous()
        return self.kernel_for("elementwise", lambda: (x.numel(), x.dtype))(x)


class ReshapingOp(UnaryOp):
    """An op layer that does more than call its kernel: no shortcut."""

    def __call__(self, x):
        type(self).layer_calls += 1
        return self.kernel_for("elementwise", lambda: (x.numel(), x.dtype))(x.reshape(-1)).reshape(x.shape)


class Refusing(UnaryOp):
    def __call__(self, x):
        type(self).layer_calls += 1
        raise NotImplementedError("no kernel for this specialization")


ENTRY = table.Entry("elementwise", "ExpFwdOp", 1)
SCHEMA = torch.ops.aten.exp.default._schema


def implementation(cls, cache_max=512, op_layer=False, fallback=torch.exp, declines=None):
    cls.layer_calls = 0
    c = calls.Calls(cache_max, op_layer, (NotImplementedError,), device_type="cpu")
    made = []

    def make_op(params):
        made.append(cls(**params))
        return made[-1]

    impl = c.implementation("exp", ENTRY, SCHEMA, make_op, fallback,
                            lambda op, why: declines.append((op, why)) if declines is not None else None)
    return c, impl, made


def test_later_calls_run_the_recorded_kernel_directly():
    c, impl, made = implementation(UnaryOp)
    x = torch.randn(64)
    for _ in range(3):
        assert torch.equal(impl(x), torch.exp(x))
    assert len(made) == 1 and UnaryOp.layer_calls == 1  # the op layer once, to record
    kernel = next(iter(made[0].kernels.values()))
    assert kernel.runs == 3 and c.built == 1
    assert sum(s.kernel is not None for s in c.specializations.values()) == 1


def test_each_specialization_gets_its_own_entry():
    c, impl, made = implementation(UnaryOp)
    for shape in [(4,), (4,), (2, 2), (8,)]:
        x = torch.randn(*shape)
        assert torch.equal(impl(x), torch.exp(x))
    assert len(c.specializations) == 3 and c.built == 3


def test_an_op_layer_that_does_more_than_call_its_kernel_is_never_bypassed():
    c, impl, _ = implementation(ReshapingOp)
    x = torch.randn(2, 3)
    for _ in range(3):
        assert torch.equal(impl(x), torch.exp(x))
    assert ReshapingOp.layer_calls == 3
    assert all(s.kernel is None for s in c.specializations.values())


def test_use_l2_keeps_every_call_on_the_op_layer():
    _, impl, _ = implementation(UnaryOp, op_layer=True)
    x = torch.randn(16)
    for _ in range(3):
        assert torch.equal(impl(x), torch.exp(x))
    assert UnaryOp.layer_calls == 3


def test_past_the_cache_cap_an_instance_is_built_per_call_and_dropped():
    c, impl, made = implementation(UnaryOp, cache_max=1)
    a, b = torch.randn(4), torch.randn(5)
    impl(a)
    for _ in range(3):
        assert torch.equal(impl(b), torch.exp(b))  # correct, rebuilt each time
    impl(a)
    assert len(c.specializations) == 1 and c.built == 4 and len(made) == 4


def test_a_refused_specialization_runs_the_fallback_and_is_not_retried():
    declines = []
    fallback_runs = []

    def fallback(x):
        fallback_runs.append(x)
        return torch.exp(x)

    c, impl, made = implementation(Refusing, fallback=fallback, declines=declines)
    x = torch.randn(8)
    for _ in range(3):
        assert torch.equal(impl(x), torch.exp(x))
    assert len(made) == 1 and len(fallback_runs) == 3 and len(c.refused) == 1
    assert declines == [("exp", "TileOps refused it: NotImplementedError: no kernel for this specialization")]


@pytest.mark.parametrize("operands, why", [
    ((torch.randn(4, dtype=torch.float64),), "dtype float64 (TileOps' class takes float16, bfloat16, float32)"),
    ((torch.randn(4, 4).t(),), "a non-contiguous operand"),
    ((torch.randn(0),), "an empty operand"),
])
def test_calls_its_class_does_not_take_run_torch_s_kernel(operands, why):
    declines = []
    _, impl, made = implementation(UnaryOp, declines=declines)
    assert torch.equal(impl(*operands), torch.exp(*operands))
    assert made == [] and declines == [("exp", why)]


def test_mixed_dtypes_and_unsupported_parameters_decline():
    c = calls.Calls(8, False, (), device_type="cpu")
    declines = []
    add = c.implementation("add.Tensor", table.OPS["add.Tensor"], torch.ops.aten.add.Tensor._schema,
                           lambda p: pytest.fail("no op for a mixed-dtype call"), torch.add,
                           lambda op, why: declines.append(why))
    a, b = torch.randn(3), torch.randn(3, dtype=torch.float16)
    assert torch.equal(add(a, b, alpha=2), torch.add(a, b, alpha=2))
    elu = c.implementation("elu", table.OPS["elu"], torch.ops.aten.elu.default._schema,
                           lambda p: pytest.fail("no op for elu with a scale"), torch.ops.aten.elu.default,
                           lambda op, why: declines.append(why))
    x = torch.randn(5)
    assert torch.equal(elu(x, 1.0, 2.0), torch.ops.aten.elu.default(x, 1.0, 2.0))
    assert declines == ["operands of different dtypes", "scale=2.0 (TileOps computes only scale=1)"]


def test_parameters_reach_the_op_class_with_aten_defaults():
    c = calls.Calls(8, False, (), device_type="cpu")
    got = []

    class Hardtanh(UnaryOp):
        def __init__(self, **params):
            super().__init__(**params)
            got.append(params)

    impl = c.implementation("hardtanh", table.OPS["hardtanh"], torch.ops.aten.hardtanh.default._schema,
                            lambda p: Hardtanh(**p), torch.ops.aten.hardtanh.default, lambda *a: None)
    x = torch.randn(4)
    impl(x)
    impl(x, -2.0, 3.0)
    assert got == [{"min_val": -1, "max_val": 1}, {"min_val": -2.0, "max_val": 3.0}]


def test_every_table_op_is_an_aten_operator_with_its_operands_first():
    for name, entry in table.OPS.items():
        base, _, overload = name.partition(".")
        schema = getattr(getattr(torch.ops.aten, base), overload or "default")._schema
        leading = [a for a in schema.arguments[:entry.tensors]]
        assert all(str(a.type) == "Tensor" for a in leading), name
        names = {a.name for a in schema.arguments}
        assert {aten for _, aten, _ in entry.params} <= names, name
        assert {arg for arg, _ in entry.fixed} <= names, name


def test_cuda_conf_annotates_every_table_op():
    conf = tomllib.loads((ROOT / "confs" / "cuda.toml").read_text())
    assert conf["conf"]["tileops"] == sorted(table.OPS)
    assert all(conf["routes"][op] == "cuda" for op in table.OPS)  # default route: cuda


def test_a_route_to_tileops_on_the_host_plugin_is_demoted_with_one_line():
    proc = run_python("""
        import json, torch, torch_fl
        x = torch.linspace(-1, 1, 5)
        print(json.dumps({"same": torch.equal(torch.exp(x.flagos()).cpu(), torch.exp(x)),
                          "route": torch_fl.routes("exp")[0]["route"], "status": torch_fl.tileops.status()}))
    """, env={"FLAGOS_PLUGIN": "host", "FLAGOS_OP_exp": "tileops"}, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["same"] and out["route"] == "cpu"
    assert flagos_lines(proc.stderr) == [f"[flagos] 1 routes to tileops: {out['status']}; they run as cpu (exp)"]


def test_installed_tileops_still_needs_a_cuda_abi_device(tmp_path):
    """A stand-in package: found, never imported, since the device cannot run it."""
    (tmp_path / "tileops").mkdir()
    (tmp_path / "tileops" / "__init__.py").write_text("raise SystemExit('tileops imported')\n")
    proc = run_python("""
        import json, torch, torch_fl
        print(json.dumps(torch_fl.tileops.stats()))
    """, env={"FLAGOS_PLUGIN": "host", "FLAGOS_FORCE_BACKEND": "tileops", "PYTHONPATH": str(tmp_path)},
        check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    build = json.loads(run_python("import json, torch_fl; print(json.dumps(torch_fl.build_config()['KERNELS']))",
                                  env={"FLAGOS_PLUGIN": "host"}, check=True).stdout.splitlines()[-1])
    expected = ("plugin 'host' memory is not CUDA-ABI (TileOps runs CUDA kernels)" if build["tileops"]
                else "this build did not compile tileops (FLAGOS_BUILD_TILEOPS=OFF)")
    assert out == {"status": expected}


def test_disable_all_cache_sets_tilelang_s_switch_unless_exported():
    code = """
        import json, os, torch, torch_fl
        from torch_fl import tileops
        tileops.prepare_environment()
        print(json.dumps([os.environ.get("TILELANG_DISABLE_CACHE"), tileops.settings()]))
    """
    def run(**env):
        proc = run_python(code, env={"FLAGOS_PLUGIN": "host", **env}, check=True)
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run() == [None, [512, False]]
    assert run(FLAGOS_TILEOPS_CACHE_MAX="7", FLAGOS_TILEOPS_USE_L2="1") == [None, [7, True]]
    assert run(FLAGOS_TILEOPS_DISABLE_ALL_CACHE="1") == ["1", [0, True]]
    assert run(FLAGOS_TILEOPS_DISABLE_ALL_CACHE="1", TILELANG_DISABLE_CACHE="0") == ["0", [0, True]]
