"""FLAGOS_STARTUP_PROFILE: the full profile installs the framework shims
(torch_fl.compat) at import; the minimal one leaves them until
torch_fl.compat.activate(), which installs what the full profile would have."""

from __future__ import annotations

import json
import sys

from conftest import ROOT, run_python

sys.path.insert(0, str(ROOT / "test"))
from sim_runtimes import environment  # noqa: E402

# Whether flex_attention's device gate is flagos' and which shims wait for
# their framework, before and after activate().
PROBE = """
    import json, torch, torch_fl
    from torch_fl import _after_import, compat
    from torch_fl.compat import qwen_image_rope
    def state():
        import torch.nn.attention.flex_attention as fa
        return {"flex_gate": getattr(fa._validate_device, "_flagos", False),
                "qwen_waiting": qwen_image_rope.MODULE in _after_import._waiting}
    before = state()
    names = compat.activate()
    print(json.dumps({"before": before, "activated": names, "after": state(),
                      "again": compat.activate()}))
"""


def probe(env: dict) -> dict:
    return json.loads(run_python(PROBE, env=env, check=True).stdout.splitlines()[-1])


def test_full_profile_installs_the_shims_at_import():
    out = probe({})
    assert out["before"]["flex_gate"] and out["after"]["flex_gate"]
    assert out["activated"] == ["flex_attention"] == out["again"]


def test_minimal_profile_leaves_them_until_activate():
    out = probe({"FLAGOS_STARTUP_PROFILE": "minimal"})
    assert out["before"] == {"flex_gate": False, "qwen_waiting": False}
    assert out["activated"] == ["flex_attention"] and out["after"]["flex_gate"]


def test_activate_installs_the_platforms_shims_for_the_active_plugin(simrt):
    # gcu (on its simulated runtime) also gets the Qwen-Image rotation, which
    # waits for diffusers to load.
    out = probe(environment(simrt, "gcu", FLAGOS_STARTUP_PROFILE="minimal"))
    assert out["before"] == {"flex_gate": False, "qwen_waiting": False}
    assert out["activated"] == ["flex_attention", "qwen_image_rope"]
    assert out["after"]["flex_gate"] and out["after"]["qwen_waiting"]


def test_a_switched_off_shim_stays_off_after_activate():
    out = probe({"FLAGOS_STARTUP_PROFILE": "minimal", "FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT": "1"})
    assert out["activated"] == [] and not out["after"]["flex_gate"]
