"""torch.nn.attention.flex_attention's device gate, relaxed for flagos.

flex_attention validates its inputs against a hard-coded set of device
names ({cuda, cpu, xpu, hpu, mps}) before anything else runs, a placeholder
in upstream's own words (_validate_device's docstring is a TODO). The gate is
a name test, not a capability test: both implementations behind it work on
flagos (the eager one through ordinary operators on every plugin, the fused
template through torch.compile). So a flagos query passes; every other
device goes to the function this replaces. FLAGOS_DISABLE_FLEX_ATTENTION_COMPAT=1
leaves the gate as upstream has it.
"""

from __future__ import annotations


def relax_device_gate(module) -> None:
    original = module._validate_device
    if getattr(original, "_flagos", False):
        return

    def _validate_device(query, key, value):
        if query.device.type == "flagos":
            return None
        return original(query, key, value)

    _validate_device._flagos = True
    _validate_device.__doc__ = original.__doc__
    module._validate_device = _validate_device
