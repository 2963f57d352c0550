"""torch.flagos graphs on the host plugin (docs/graphs.md): capture and replay
of a training step against eager results, make_graphed_callables, the errors
a capture gives, private pools. The host plugin captures the work its streams
would run, so the operators under test take the native route (host_native.toml):
mm, mul, add, sum, fill and the core's copies."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, run_python

NATIVE = {"FLAGOS_BACKEND_CONFIG": str(ROOT / "confs" / "host_native.toml")}

# A two-layer network in operators the host plugin runs natively.
PRELUDE = """
import json, torch, torch_fl

def loss_of(x, w1, w2):
    h = x.mm(w1.t())
    y = (h * h).mm(w2.t())
    return (y * y).sum(dim=[0, 1])
"""


def run(code: str, **env: str) -> dict:
    proc = run_python(PRELUDE + code, env={**NATIVE, **env})
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("options", ["", "strict=1"], ids=["normal", "strict"])
def test_a_captured_training_step_replays_like_eager(options):
    # strict=1: device memory is PROT_NONE to the core, so capture and replay
    # reach it only through plugin calls.
    out = run("""
torch.manual_seed(0)
w1, w2 = torch.randn(16, 8) * 0.3, torch.randn(4, 16) * 0.3
batches = [torch.randn(5, 8) for _ in range(6)]

def train(device, graphed):
    p1 = w1.clone().to(device).requires_grad_()
    p2 = w2.clone().to(device).requires_grad_()
    opt = torch.optim.SGD([p1, p2], lr=0.01, foreach=False)
    losses = []
    if not graphed:
        for b in batches:
            opt.zero_grad(set_to_none=True)
            loss = loss_of(b.to(device), p1, p2)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, p1, p2
    static_x = batches[0].to(device)
    g = torch.flagos.FlagosGraph()
    opt.zero_grad(set_to_none=True)
    with torch.flagos.graph(g):
        static_loss = loss_of(static_x, p1, p2)
        static_loss.backward()
        opt.step()
    for b in batches:
        static_x.copy_(b)
        g.replay()
        losses.append(static_loss.item())
    return losses, p1, p2

el, e1, e2 = train("cpu", False)
gl, g1, g2 = train("flagos", True)
print(json.dumps({"losses": [abs(a - b) / max(abs(a), 1e-6) for a, b in zip(el, gl)],
                  "changed": el[0] != el[-1],
                  "w1": torch.allclose(e1.detach(), g1.detach().cpu(), rtol=1e-4, atol=1e-5),
                  "w2": torch.allclose(e2.detach(), g2.detach().cpu(), rtol=1e-4, atol=1e-5)}))
""", FLAGOS_PLUGIN_OPTIONS=options)
    assert out["changed"]  # the replays trained: the loss moved
    assert max(out["losses"]) < 1e-4
    assert out["w1"] and out["w2"]


def test_make_graphed_callables_matches_eager_grads():
    out = run("""
torch.manual_seed(1)
eager = torch.nn.Sequential(torch.nn.Linear(8, 16, bias=False), torch.nn.Linear(16, 4, bias=False))
graphed = torch.nn.Sequential(torch.nn.Linear(8, 16, bias=False), torch.nn.Linear(16, 4, bias=False))
graphed.load_state_dict(eager.state_dict())
graphed = graphed.to("flagos")
sample = torch.randn(5, 8, device="flagos")
graphed = torch.flagos.make_graphed_callables(graphed, (sample,))
diffs = []
for step in range(3):
    x = torch.randn(5, 8)
    for m in (eager, graphed):
        m.zero_grad(set_to_none=True)
        y = m(x.to(next(m.parameters()).device))
        (y * y).sum(dim=[0, 1]).backward()
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        diffs.append((pe.grad - pg.grad.cpu()).abs().max().item() / pe.grad.abs().max().item())
print(json.dumps({"diffs": diffs}))
""")
    assert len(out["diffs"]) == 6 and max(out["diffs"]) < 1e-4


def test_a_sync_inside_capture_is_a_clear_error_and_the_process_stays_usable():
    out = run("""
x = torch.ones(64, device="flagos")
errors = {}
for name, body in {"synchronize": lambda: torch.flagos.synchronize(),
                   "item": lambda: (x + x).sum(dim=[0]).item(),
                   "cpu_route": lambda: torch.sin(x),
                   "random": lambda: torch.rand(4, device="flagos")}.items():
    g = torch.flagos.FlagosGraph()
    try:
        with torch.flagos.graph(g):
            y = x + x
            body()
        errors[name] = None
    except RuntimeError as e:
        errors[name] = str(e).splitlines()[0]
    errors[name + "_capturing_after"] = torch.flagos.is_current_stream_capturing()
after = (x + x).sum(dim=[0]).item()
g = torch.flagos.FlagosGraph()
with torch.flagos.graph(g):
    z = x + x + x
g.replay()
print(json.dumps({"errors": errors, "after": after, "replayed": z.sum(dim=[0]).item()}))
""")
    e = out["errors"]
    assert e["synchronize"].startswith("[flagos]") and "STREAM_CAPTURE" in e["synchronize"]
    assert "capture" in e["synchronize"] and "invalidated" in e["synchronize"]
    assert "STREAM_CAPTURE" in e["item"]
    assert "aten::sin" in e["cpu_route"] and "cpu route" in e["cpu_route"]
    assert "random operators cannot be captured" in e["random"]
    assert not any(v for k, v in e.items() if k.endswith("_capturing_after"))
    assert out["after"] == 128.0 and out["replayed"] == 192.0


def test_graphs_share_a_pool_and_replay_in_order():
    out = run("""
a = torch.full((1000,), 2.0, device="flagos")
handle = torch.flagos.graph_pool_handle()
g1, g2 = torch.flagos.FlagosGraph(), torch.flagos.FlagosGraph()
with torch.flagos.graph(g1, pool=handle):
    b = a + a
with torch.flagos.graph(g2, pool=g1.pool()):
    c = b * b
results = []
for v in (1.0, 3.0):
    a.fill_(v)
    g1.replay()
    g2.replay()
    results.append(c.sum(dim=[0]).item())
print(json.dumps({"same_pool": tuple(g1.pool()) == tuple(g2.pool()) == tuple(handle),
                  "results": results}))
""")
    assert out["same_pool"]
    assert out["results"] == [4000.0, 36000.0]


def test_blocks_freed_in_a_capture_stay_in_its_pool_and_reset_frees_memory():
    out = run("""
x = torch.ones(4096, device="flagos")
torch.flagos.empty_cache()
alloc0, reserved0 = torch.flagos.memory_allocated(), torch.flagos.memory_reserved()
g = torch.flagos.FlagosGraph()
with torch.flagos.graph(g):
    tmp = x + x
    freed = tmp.data_ptr()
    del tmp
    y = x * x
eager = [x + x for _ in range(4)]
reused = any(t.data_ptr() == freed for t in eager)
del eager
g.replay()
held = torch.flagos.memory_allocated() - alloc0
del y
g.reset()
torch.flagos.empty_cache()
print(json.dumps({"reused": reused, "held": held,
                  "alloc": torch.flagos.memory_allocated() - alloc0,
                  "reserved": torch.flagos.memory_reserved() - reserved0}))
""")
    assert not out["reused"]  # a block the capture freed never served eager code
    assert out["held"] > 0
    assert out["alloc"] == 0 and out["reserved"] == 0


def test_a_plugin_without_graphs_says_so():
    proc = run_python(PRELUDE + """
try:
    torch.flagos.FlagosGraph()
except RuntimeError as e:
    print(str(e))
""", env={**NATIVE, "FLAGOS_PLUGIN_OPTIONS": "graphs=0"})
    assert proc.returncode == 0, proc.stderr
    assert "[flagos] plugin 'host' does not provide graphs" in proc.stdout


def test_capture_must_use_a_side_stream():
    out = run("""
g = torch.flagos.FlagosGraph()
try:
    g.capture_begin()
    msg = None
except RuntimeError as e:
    msg = str(e)
print(json.dumps({"msg": msg, "capturing": torch.flagos.is_current_stream_capturing()}))
""")
    assert "default stream" in out["msg"] and not out["capturing"]


def test_an_operator_on_the_cpu_fallback_route_is_refused_in_a_capture():
    # strict=1: memory is not host-addressable, so host routes are cpu_fallback.
    out = run("""
x = torch.ones(8, device="flagos")
g = torch.flagos.FlagosGraph()
try:
    with torch.flagos.graph(g):
        x.sin()
    msg = None
except RuntimeError as e:
    msg = str(e).splitlines()[0]
print(json.dumps({"msg": msg, "after": x.sin().sum(dim=[0]).item()}))
""", FLAGOS_PLUGIN_OPTIONS="strict=1")
    assert out["msg"].startswith("[flagos] aten::sin takes the cpu_fallback route")
    assert abs(out["after"] - 8 * 0.8414709848) < 1e-5
