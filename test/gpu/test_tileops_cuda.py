"""The `tileops` route on an SM90 GPU (docs/routing.md, "TileOps"): every
operator of torch_fl/tileops/table.py under FLAGOS_FORCE_BACKEND=tileops
against native CUDA, run by TileOps (no call declined), on the flagos
current stream. Each test runs a fresh interpreter: the route is fixed at
import. FLAGOS_TILEOPS_FULL=1 uses each op's TileOps manifest workload shape
instead of the small odd one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]

try:
    import tileops  # noqa: F401

    HAVE = True
except Exception:  # not installed, or not importable beside this torch
    HAVE = False
needs_tileops = pytest.mark.skipif(not HAVE, reason="tileops is not importable here")


def run(code: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLAGOS_") or k == "FLAGOS_TILEOPS_FULL"}
    environ.update(FLAGOS_ALIAS_CUDA="0", FLAGOS_FORCE_BACKEND="tileops", PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]), **env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ, capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# Tolerance per dtype against native CUDA (|got - want| <= atol + rtol |want|):
# TileLang and torch evaluate the same formulas with their own intrinsics.
TOL = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-5, 1e-5)}

ACCURACY = """
    import json, os, torch, torch_fl
    from torch_fl.tileops import table
    from tools.bench.tileops import call, operands
    TOL = %r
    full = os.environ.get("FLAGOS_TILEOPS_FULL") == "1"
    out = {"status": torch_fl.tileops.status(), "ops": {}}
    for op, entry in table.OPS.items():
        shape = ((3, 129, 64), (3, 64, 96)) if op == "bmm" else (257, 129)
        if full and op != "bmm":
            from tileops.manifest import load_workloads
            w = load_workloads(entry.cls)[0]
            shape = tuple(w["S"] if "S" in w else w["A"])  # unary ops name it S, binary ones A and B
        for dtype in entry.dtypes:
            xs = operands(op, shape, getattr(torch, dtype))
            got = call(op, [x.to("flagos") for x in xs]).cpu()
            want = call(op, [x.to("cuda") for x in xs]).cpu()
            same = got.dtype == want.dtype and got.shape == want.shape
            if same and got.dtype == torch.bool:
                ok, worst = torch.equal(got, want), float((got != want).sum())
            elif same:
                rtol, atol = TOL[dtype]
                g, w = got.double(), want.double()
                excess = (g - w).abs() - (atol + rtol * w.abs())
                ok = torch.equal(g.isnan(), w.isnan()) and bool((excess[~w.isnan()] <= 0).all())
                worst = float((g - w).abs().nan_to_num(0).max())
            else:
                ok, worst = False, None
            out["ops"][f"{op}/{dtype}"] = {"route": torch_fl.routes(op)[0]["route"], "ok": ok, "max_abs": worst,
                                           "shape": list(got.shape)}
    out["stats"] = torch_fl.tileops.stats()
    print(json.dumps(out))
""" % (TOL,)


@needs_tileops
def test_every_operator_matches_native_cuda_and_runs_on_tileops():
    from torch_fl.tileops import table

    out = run(ACCURACY)
    assert out["status"].split(" ")[0].isdigit(), out["status"]
    assert len(out["ops"]) == sum(len(e.dtypes) for e in table.OPS.values())
    print(json.dumps({k: v["max_abs"] for k, v in out["ops"].items()}))
    bad = {k: r for k, r in out["ops"].items() if r["route"] != "tileops" or not r["ok"]}
    assert not bad, bad
    assert out["stats"]["declined"] == {}  # TileOps ran every call, torch's kernel none
    assert out["stats"]["shortcuts"] > 0


@needs_tileops
def test_tileops_runs_on_the_flagos_current_stream():
    out = run("""
        import json, torch, torch_fl
        a = torch.randn(4096, 4096, device="flagos", dtype=torch.float16)
        want = torch.exp(torch.full((1,), 0.5, dtype=torch.float16, device="cuda")).cpu()
        s = torch.flagos.Stream()
        ok = []
        for _ in range(2):  # the op layer, then the recorded kernel called directly
            with torch.flagos.stream(s):
                for _ in range(8):
                    b = a @ a          # queued ahead on s
                x = b.mul(0).add_(0.5)
                y = torch.exp(x)       # tileops: must wait for x on s
            s.synchronize()
            ok.append(bool(torch.all(y.cpu() == want)))
        print(json.dumps({"route": torch_fl.routes("exp")[0]["route"], "ok": all(ok),
                          "shortcuts": torch_fl.tileops.stats()["shortcuts"]}))
    """)
    assert out == {"route": "tileops", "ok": True, "shortcuts": 1}


@needs_tileops
def test_instance_cache_and_op_layer_switches_act():
    code = """
        import json, torch, torch_fl
        xs = [torch.randn(n, device="flagos", dtype=torch.float16) for n in (100, 200, 300)]
        for _ in range(2):
            for x in xs:
                torch.testing.assert_close(torch.exp(x).cpu(), torch.exp(x.cuda()).cpu())
        print(json.dumps(torch_fl.tileops.stats()))
    """
    default = run(code)
    assert default["cached"] == 3 and default["built"] == 3 and default["shortcuts"] == 3
    capped = run(code, FLAGOS_TILEOPS_CACHE_MAX="1")
    assert capped["cached"] == 1 and capped["built"] > 3  # rebuilt per call past the cap
    layer = run(code, FLAGOS_TILEOPS_USE_L2="1")
    assert layer["cached"] == 3 and layer["shortcuts"] == 0
    nothing = run(code, FLAGOS_TILEOPS_DISABLE_ALL_CACHE="1")
    assert nothing["cached"] == 0 and nothing["shortcuts"] == 0


@needs_tileops
def test_a_specialization_tileops_refuses_runs_torch_s_kernel():
    out = run("""
        import json, torch, torch_fl
        a, b = torch.randn(2, 33, 65, dtype=torch.float16), torch.randn(2, 65, 17, dtype=torch.float16)
        got = [torch.bmm(a.to("flagos"), b.to("flagos")).cpu() for _ in range(2)]
        want = torch.bmm(a.cuda(), b.cuda()).cpu()
        print(json.dumps({"same": all(torch.equal(g, want) for g in got), **torch_fl.tileops.stats()}))
    """)
    assert out["same"] and out["refused"] == 1 and out["built"] == 1 and out["cached"] == 0
    assert out["declined"]["bmm"].startswith("TileOps refused it: OpNotAvailableError: ")


@needs_tileops
def test_table_pairs_match_the_tileops_manifest():
    from tileops.manifest import load_manifest

    from torch_fl.tileops import table

    manifest = load_manifest()
    refs = {op: manifest[e.cls]["ref_api"] for op, e in table.OPS.items()}
    for op, ref in refs.items():
        base = op.split(".")[0]
        assert ref.split(".")[-1] in (base, {"div": "div"}.get(base)), (op, ref)
