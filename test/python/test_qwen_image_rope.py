"""diffusers' Qwen-Image rotary embedding on the flagos device
(torch_fl.compat.qwen_image_rope): installed on gcu and ascend only, tested
here on the host plugin by forcing those platforms' install step. The
diffusers tests skip where diffusers is not importable."""

from __future__ import annotations

import importlib.util
import types

import pytest
import torch

from conftest import run_python

has_diffusers = pytest.mark.skipif(importlib.util.find_spec("diffusers") is None,
                                   reason="diffusers is not installed")

FORCED = """
    import torch, torch_fl
    from torch_fl import compat
    compat.install({platform!r})  # the gcu/ascend import step, on the host plugin
    from diffusers.models.transformers import transformer_qwenimage as q
"""

NUMERIC = FORCED + """
    torch.manual_seed(0)
    rope = q.QwenEmbedRope(theta=10000, axes_dim=[16, 56, 56], scale_rope=True)
    shapes = [(1, 6, 8)]
    vid_c, txt_c = rope(shapes, device=torch.device("cpu"), max_txt_seq_len=7)
    vid_a, txt_a = rope(shapes, device=torch.device("flagos"), max_txt_seq_len=7)
    assert vid_c.is_complex() and not vid_a.is_complex(), (vid_c.dtype, vid_a.dtype)
    assert vid_a.device.type == "flagos" and vid_a.shape == vid_c.shape, (vid_a.device, vid_a.shape)
    worst = 0.0
    for freqs_c, freqs_a, seq in ((vid_c, vid_a, 48), (txt_c, txt_a, 7)):
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(2, seq, 3, 128).to(dtype)
            ref = q.apply_rotary_emb_qwen(x, freqs_c, use_real=False)  # diffusers' complex path, cpu
            got = q.apply_rotary_emb_qwen(x.to("flagos"), freqs_a, use_real=False)
            assert got.device.type == "flagos" and got.dtype == dtype
            tol = 1e-5 if dtype == torch.float32 else 1e-2
            err = (got.cpu().float() - ref.float()).abs().max().item()
            assert err <= tol * max(1.0, ref.float().abs().max().item()), (dtype, err)
            worst = max(worst, err) if dtype == torch.float32 else worst
    # apply_rotary_emb_qwen_neuron's expansion: each angle's cos/sin repeated in place
    angles = vid_a.cpu()
    x = torch.randn(2, 48, 3, 128)
    cos = torch.cos(angles).repeat_interleave(2, dim=-1)[:, None]
    sin = torch.sin(angles).repeat_interleave(2, dim=-1)[:, None]
    real, imag = x.reshape(*x.shape[:-1], -1, 2).unbind(-1)
    neuron = x * cos + torch.stack([-imag, real], -1).flatten(3) * sin
    from torch_fl.compat.qwen_image_rope import rotate
    assert torch.equal(rotate(x, angles), neuron)
    print("worst", worst)
"""


@has_diffusers
@pytest.mark.parametrize("platform", ["gcu", "ascend"])
def test_the_flagos_rotation_matches_the_complex_reference(platform):
    proc = run_python(NUMERIC.format(platform=platform), env={"FLAGOS_PLUGIN": "host"}, check=True)
    assert "worst" in proc.stdout, proc.stdout


TRANSFORMER = FORCED + """
    from diffusers import QwenImageTransformer2DModel
    torch.manual_seed(0)
    model = QwenImageTransformer2DModel(patch_size=2, in_channels=16, out_channels=4, num_layers=2,
                                        attention_head_dim=32, num_attention_heads=2,
                                        joint_attention_dim=24, axes_dims_rope=(8, 12, 12)).eval()
    hidden = torch.randn(1, 12, 16)             # a 3x4 latent grid, patchified
    text = torch.randn(1, 5, 24)
    mask = torch.ones(1, 5, dtype=torch.bool)
    kwargs = dict(timestep=torch.tensor([0.5]), img_shapes=[[(1, 3, 4)]], return_dict=False)
    with torch.no_grad():
        ref = model(hidden_states=hidden, encoder_hidden_states=text, encoder_hidden_states_mask=mask, **kwargs)[0]
        model.to("flagos")
        got = model(hidden_states=hidden.to("flagos"), encoder_hidden_states=text.to("flagos"),
                    encoder_hidden_states_mask=mask.to("flagos"), **{{**kwargs, "timestep": kwargs["timestep"].to("flagos")}})[0]
    rope = model.pos_embed
    angles = rope._get_device_freqs(torch.device("flagos"))[0]
    assert not angles.is_complex()
    print("err", (got.cpu() - ref).abs().max().item())
"""


@has_diffusers
def test_a_qwen_image_transformer_on_flagos_takes_the_angles_and_matches_cpu():
    proc = run_python(TRANSFORMER.format(platform="gcu"), env={"FLAGOS_PLUGIN": "host"}, check=True)
    err = float(proc.stdout.split("err")[-1])
    assert err < 1e-4, proc.stdout


UNTOUCHED = FORCED + """
    original = q.apply_rotary_emb_qwen
    print(getattr(original, "_flagos", False),
          any(getattr(getattr(q, c)._get_device_freqs, "_flagos", False) for c in ("QwenEmbedRope", "QwenEmbedLayer3DRope")),
          "ROPE_PER_DEVICE" in vars(q) and "flagos" in q.ROPE_PER_DEVICE)
"""


@has_diffusers
@pytest.mark.parametrize("platform,env,patched", [
    ("gcu", {}, True),
    ("ascend", {}, True),
    ("gcu", {"FLAGOS_DISABLE_QWENIMAGE_ROPE": "1"}, False),
    ("ascend", {"FLAGOS_DISABLE_QWENIMAGE_ROPE": "1"}, False),
    ("host", {}, False),
])
def test_installed_on_gcu_and_ascend_unless_disabled(platform, env, patched):
    proc = run_python(UNTOUCHED.format(platform=platform), env={"FLAGOS_PLUGIN": "host", **env}, check=True)
    rotation, operand, table = proc.stdout.split()
    assert (rotation, operand) == (str(patched), str(patched)), proc.stdout
    assert table == "False"  # diffusers as released has no per-device table


@has_diffusers
def test_the_host_plugin_import_leaves_diffusers_alone():
    proc = run_python("""
        import torch, torch_fl
        from diffusers.models.transformers import transformer_qwenimage as q
        print(getattr(q.apply_rotary_emb_qwen, "_flagos", False), getattr(q.QwenEmbedRope._get_device_freqs, "_flagos", False))
    """, env={"FLAGOS_PLUGIN": "host"}, check=True)
    assert proc.stdout.split() == ["False", "False"], proc.stdout


def test_a_per_device_table_gains_flagos_and_keeps_its_entries():
    """A diffusers build with ROPE_PER_DEVICE: the rotation is registered there
    (an existing flagos entry is kept) and the module function is left alone."""
    from torch_fl.compat import qwen_image_rope

    class Rope:
        def _get_device_freqs(self, device):
            return "original"

    def apply_rotary_emb_qwen(x, freqs_cis, use_real=True, use_real_unbind_dim=-1):
        return "original"

    neuron = object()
    module = types.SimpleNamespace(QwenEmbedRope=Rope, apply_rotary_emb_qwen=apply_rotary_emb_qwen,
                                   ROPE_PER_DEVICE={"neuron": neuron})
    qwen_image_rope.install(module)
    qwen_image_rope.install(module)  # idempotent
    assert set(module.ROPE_PER_DEVICE) == {"neuron", "flagos"} and module.ROPE_PER_DEVICE["neuron"] is neuron
    assert module.apply_rotary_emb_qwen is apply_rotary_emb_qwen
    assert Rope._get_device_freqs._flagos and Rope._get_device_freqs.__wrapped__.__name__ == "_get_device_freqs"
    x = torch.randn(1, 4, 2, 8)
    angles = torch.randn(4, 4)
    assert torch.equal(module.ROPE_PER_DEVICE["flagos"](x, angles), qwen_image_rope.rotate(x, angles))
    assert Rope()._get_device_freqs(torch.device("cpu")) == "original"
    mine = object()
    module.ROPE_PER_DEVICE = {"flagos": mine}
    qwen_image_rope.install(module)
    assert module.ROPE_PER_DEVICE["flagos"] is mine
