"""The conf generator (`python -m tools.routing_conf generate`, docs/routing.md):
it produces every committed generated conf, the routes follow the installed
torch, and — against the torch the committed confs were made from — the output
is byte-identical, so a stale conf fails here."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, flagos_lines, run_python

CONFS = ROOT / "confs"
GENERATED_BY = 'generated_by = "tools/routing_conf"'


def committed_generated() -> list[Path]:
    """The committed confs the generator owns (default.toml is hand-written)."""
    return sorted(p for p in CONFS.glob("*.toml") if GENERATED_BY in p.read_text())


def generate(out: Path, *args: str, **env: str) -> Path:
    proc = run_python("", env={"FLAGOS_PLUGIN": "host", "PYTHONPATH": str(ROOT), **env},
                      args=["-m", "tools.routing_conf", "generate", "--out", str(out), *args])
    assert proc.returncode == 0, proc.stderr
    assert flagos_lines(proc.stderr) == []
    # One "<path>: N routes" line per file written.
    written = [line.split(":")[0] for line in proc.stdout.splitlines()]
    assert sorted(written) == sorted(str(p) for p in out.iterdir())
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("confs"))


@pytest.fixture(scope="module")
def generated_all(tmp_path_factory) -> Path:
    """cuda.toml under FLAGOS_CODEGEN_ALL=1."""
    return generate(tmp_path_factory.mktemp("confs_all"), "--only", "cuda.toml", FLAGOS_CODEGEN_ALL="1")


def routes_of(path: Path) -> dict[str, str]:
    return tomllib.loads(path.read_text()).get("routes", {})


def test_every_committed_conf_is_produced(generated):
    committed = {p.name for p in committed_generated()}
    assert "host.toml" in committed and "host_native.toml" in committed
    assert {p.name for p in generated.iterdir()} == committed


def test_host_conf_routes_add_to_cpu_and_host_native_to_native(generated):
    assert routes_of(generated / "host.toml")["add.Tensor"] == "cpu"
    native = tomllib.loads((generated / "host_native.toml").read_text())
    assert native["conf"]["include"] == ["host.toml"]
    assert native["routes"]["add.Tensor"] == "native"
    assert set(native["routes"].values()) == {"native"}


def test_cuda_confs_send_unlisted_ops_to_cuda(generated):
    """The shipped CUDA confs come from a CPU-only torch, which cannot route
    CUDA-only ops (cuDNN attention, which F.scaled_dot_product_attention picks
    on an H100/H200): their default must be `cuda`, which serves any op the
    running torch has a CUDA kernel for, not cpu_fallback, which has none."""
    for name in ("cuda.toml", "cuda_flaggems.toml"):
        conf = tomllib.loads((generated / name).read_text())["conf"]
        assert conf["default"] == "cuda", name
    assert tomllib.loads((generated / "host.toml").read_text())["conf"]["default"] == "cpu_fallback"


def test_no_conf_lists_a_composite_implicit_op(generated):
    import torch

    has = torch._C._dispatch_has_kernel_for_dispatch_key
    for conf in sorted(generated.iterdir()):
        composite = [op for op in routes_of(conf)
                     if has("aten::" + op, "CompositeImplicitAutograd")]
        assert composite == [], conf.name


def test_generated_confs_load_on_this_torch_and_plugin(generated):
    """Each conf passes `conf check` here (routes this host cannot run are
    demoted with notes, never errors)."""
    code = f"""
        import json, pathlib, torch_fl
        counts = {{}}
        for p in sorted(pathlib.Path({str(generated)!r}).glob("*.toml")):
            routes, notes = torch_fl._routing.check_conf(str(p))
            counts[p.name] = len(routes)
        print(json.dumps(counts))
    """
    proc = run_python(code, env={"FLAGOS_PLUGIN": "host"})
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, n in counts.items():
        conf = tomllib.loads((generated / name).read_text())
        listed = set(conf.get("routes", {}))
        for inc in conf["conf"].get("include", []):
            listed |= set(routes_of(generated / inc))
        assert n == len(listed), name


def test_generated_confs_equal_the_committed_ones_for_the_same_torch(generated):
    import torch

    committed_torch = tomllib.loads((CONFS / "host.toml").read_text())["conf"]["torch"]
    if torch.__version__.split("+")[0] != committed_torch:
        pytest.skip(f"the committed confs are for torch {committed_torch}, this is {torch.__version__}")
    stale = [p.name for p in committed_generated() if p.read_text() != (generated / p.name).read_text()]
    assert stale == [], "regenerate: python -m tools.routing_conf generate"


def test_codegen_all_off_changes_nothing(generated, tmp_path):
    off = generate(tmp_path, "--only", "cuda.toml", FLAGOS_CODEGEN_ALL="0")
    assert (off / "cuda.toml").read_text() == (generated / "cuda.toml").read_text()


def test_codegen_all_adds_the_leaf_cuda_ops_on_cuda(generated, generated_all):
    import torch

    from tools.routing_conf.cuda_kernels import ops_with_cuda_kernel

    subset, full = routes_of(generated / "cuda.toml"), routes_of(generated_all / "cuda.toml")
    assert full.items() >= subset.items()
    extra = set(full) - set(subset)
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    cuda_yaml = ops_with_cuda_kernel()
    assert extra and all(op in cuda_yaml and not has("aten::" + op, "CompositeImplicitAutograd") for op in extra)
    assert {full[op] for op in extra} == {"cuda"}
    # A CPU-only torch registers no cuDNN attention kernel, so only the full set lists it.
    if not torch.backends.cuda.is_built():
        assert "_scaled_dot_product_cudnn_attention" in extra
    assert full["_scaled_dot_product_cudnn_attention"] == "cuda"
    assert "FLAGOS_CODEGEN_ALL=1" in (generated_all / "cuda.toml").read_text()


@pytest.mark.parametrize("op", [
    "_triton_scaled_dot_attention",  # the explicit list: a placeholder CUDA kernel
    "empty_strided",                 # the core implements it
    "_cudnn_init_dropout_state",     # takes a Device argument
    "linear",                        # CompositeImplicitAutograd
])
def test_codegen_all_keeps_the_excluded_ops_out(generated_all, op):
    from tools.routing_conf.cuda_kernels import ops_with_cuda_kernel

    if op != "linear":
        assert op in ops_with_cuda_kernel()
    assert op not in routes_of(generated_all / "cuda.toml")


def test_codegen_all_conf_is_for_a_cuda_torch(generated_all):
    """The extra ops have no kernel in a CPU-only torch of the same release,
    which refuses the conf rather than skip them."""
    import torch

    if torch.backends.cuda.is_built():
        pytest.skip("a CUDA torch routes every listed op")
    code = f"""
        import torch_fl
        torch_fl._routing.check_conf({str(generated_all / "cuda.toml")!r})
    """
    proc = run_python(code, env={"FLAGOS_PLUGIN": "host"})
    assert proc.returncode != 0
    assert "has no CPU, CUDA or composite kernel in this torch" in proc.stderr
