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


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("confs")
    proc = run_python("", env={"FLAGOS_PLUGIN": "host", "PYTHONPATH": str(ROOT)},
                      args=["-m", "tools.routing_conf", "generate", "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert flagos_lines(proc.stderr) == []
    # One "<path>: N routes" line per file written.
    written = [line.split(":")[0] for line in proc.stdout.splitlines()]
    assert sorted(written) == sorted(str(p) for p in out.iterdir())
    return out


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
