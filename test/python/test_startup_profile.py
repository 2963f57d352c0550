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
    def aliased():
        try:
            return torch.ones(1).to("cuda").device.type == "flagos"
        except (AssertionError, RuntimeError):  # a CPU torch's own "cuda"
            return False
    def state():
        import torch.nn.attention.flex_attention as fa
        return {"flex_gate": getattr(fa._validate_device, "_flagos", False),
                "qwen_waiting": qwen_image_rope.MODULE in _after_import._waiting,
                "cuda_alias": aliased(),
                "cuda_shim": torch.cuda.is_available is torch.flagos.is_available}
    before = state()
    names = compat.activate()
    print(json.dumps({"before": before, "activated": names, "after": state(),
                      "again": compat.activate()}))
"""


def probe(env: dict) -> dict:
    return json.loads(run_python(PROBE, env=env, check=True).stdout.splitlines()[-1])


def test_full_profile_installs_the_shims_at_import():
    out = probe({})
    assert out["before"] == out["after"] == {"flex_gate": True, "qwen_waiting": False, "cuda_alias": True,
                                             "cuda_shim": True}
    assert out["activated"] == ["cuda_alias", "transformers_device", "cuda_shim", "apex", "flex_attention", "hub_kernels", "data_parallel"] == out["again"]


def test_minimal_profile_leaves_them_until_activate():
    out = probe({"FLAGOS_STARTUP_PROFILE": "minimal"})
    assert out["before"] == {"flex_gate": False, "qwen_waiting": False, "cuda_alias": False, "cuda_shim": False}
    assert out["activated"] == ["cuda_alias", "transformers_device", "cuda_shim", "apex", "flex_attention", "hub_kernels", "data_parallel"]
    assert out["after"] == {"flex_gate": True, "qwen_waiting": False, "cuda_alias": True, "cuda_shim": True}


def test_activate_installs_the_platforms_shims_for_the_active_plugin(simrt):
    # gcu (on its simulated runtime) also gets the Qwen-Image rotation, which
    # waits for diffusers to load.
    out = probe(environment(simrt, "gcu", FLAGOS_STARTUP_PROFILE="minimal"))
    assert not any(out["before"].values())
    # (no apex: gcu is neither CUDA-ABI nor host-addressable)
    assert out["activated"] == ["cuda_alias", "transformers_device", "cuda_shim", "flex_attention", "hub_kernels", "data_parallel", "qwen_image_rope"]
    assert out["after"]["flex_gate"] and out["after"]["qwen_waiting"]


def test_a_switched_off_shim_stays_off_after_activate():
    out = probe({"FLAGOS_STARTUP_PROFILE": "minimal", "FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT": "1",
                 "FLAGOS_ALIAS_CUDA": "0", "FLAGOS_DISABLE_CUDA_SHIM": "1", "FLAGOS_DISABLE_APEX_COMPAT": "1"})
    # hub_kernels has no switch: it only lets flagos through a check that would refuse it.
    assert out["activated"] == ["hub_kernels", "data_parallel"] and not any(out["after"].values())
