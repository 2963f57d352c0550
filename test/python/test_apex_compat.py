"""Apex's multi-tensor entry on flagos tensors (torch_fl.compat.apex). Apex
itself needs a CUDA build, so a stand-in package with Apex's entry point
(MultiTensorApply) and a stand-in amp_C, whose kernels work on whatever
device their tensors say and record what they were given, takes its place.
On the host plugin the stock device is the CPU (on the cuda plugin, CUDA):
the kernels get zero-copy views of the flagos tensors, and their results come
back as flagos tensors."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import run_python

FILES = {
    "apex/__init__.py": "",
    "apex/multi_tensor_apply/__init__.py": """
        from .multi_tensor_apply import MultiTensorApply
        multi_tensor_applier = MultiTensorApply(2048 * 32)
    """,
    # Apex's own entry, as Apex writes it.
    "apex/multi_tensor_apply/multi_tensor_apply.py": """
        class MultiTensorApply:
            available = True
            def __init__(self, chunk_size):
                self.chunk_size = chunk_size
            def __call__(self, op, noop_flag_buffer, tensor_lists, *args):
                return op(self.chunk_size, noop_flag_buffer, tensor_lists, *args)
    """,
    "amp_C.py": """
        import torch
        seen = []
        def multi_tensor_scale(chunk_size, noop_flag, tensor_lists, scale):
            seen.append([(t.device.type, t.data_ptr()) for t in [noop_flag, *tensor_lists[0], *tensor_lists[1]]])
            for src, dst in zip(*tensor_lists):
                dst.copy_(src * scale)
                if not torch.isfinite(src).all():
                    noop_flag.fill_(1)
        def multi_tensor_l2norm(chunk_size, noop_flag, tensor_lists, per_tensor):
            norms = torch.stack([t.float().norm() for t in tensor_lists[0]])
            return norms.norm(), norms
    """,
}

PROBE = """
    import json, torch, torch_fl
    import amp_C
    from apex.multi_tensor_apply import multi_tensor_applier
    src = [torch.arange(4.0, device="flagos"), torch.tensor([1.0, float("inf")], device="flagos")]
    dst = [torch.zeros(4, device="flagos"), torch.zeros(2, device="flagos")]
    noop = torch.zeros(1, dtype=torch.int, device="flagos")
    multi_tensor_applier(amp_C.multi_tensor_scale, noop, [src, dst], 0.5)
    total, per = multi_tensor_applier(amp_C.multi_tensor_l2norm, noop, [src[:1]], True)
    print(json.dumps({
        "installed": "apex" in torch_fl.compat._installed,
        "stock": "cuda" if "cuda_abi" in torch.flagos.get_device_properties(0).capabilities else "cpu",
        "seen": amp_C.seen[0],
        "flagos_ptrs": [t.data_ptr() for t in [noop, *src, *dst]],
        "dst": [d.cpu().tolist() for d in dst],
        "noop": noop.item(),
        "norm": [str(total.device), round(total.item(), 5), str(per.device)],
    }))
"""


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    root = tmp_path_factory.mktemp("apex_stand_in")
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def test_kernels_get_zero_copy_views_and_results_come_back_on_flagos(stand_in):
    out = json.loads(run_python(PROBE, env={"PYTHONPATH": stand_in}, check=True).stdout.splitlines()[-1])
    assert out["installed"]
    assert [d for d, _ in out["seen"]] == [out["stock"]] * 5  # cpu on the host plugin, cuda on cuda
    assert [p for _, p in out["seen"]] == out["flagos_ptrs"]  # the same bytes: no copy
    assert out["dst"][0] == [0.0, 0.5, 1.0, 1.5] and out["dst"][1][0] == 0.5
    assert out["noop"] == 1  # the kernel's overflow flag reached the flagos tensor
    assert out["norm"] == ["flagos:0", round((0 + 1 + 4 + 9) ** 0.5, 5), "flagos:0"]


def test_disable_apex_compat_leaves_apex_alone(stand_in):
    proc = run_python(PROBE, env={"PYTHONPATH": stand_in, "FLAGOS_DISABLE_APEX_COMPAT": "1"})
    assert "apex" not in proc.stdout
    # Unpatched, the stand-in kernels see flagos tensors themselves.
    probe = """
        import torch, torch_fl, amp_C
        from apex.multi_tensor_apply import multi_tensor_applier
        t = torch.ones(2, device="flagos")
        flag = torch.zeros(1, dtype=torch.int, device="flagos")
        multi_tensor_applier(amp_C.multi_tensor_scale, flag, [[t], [t]], 2.0)
        print(amp_C.seen[0][0][0], "apex" in torch_fl.compat._installed)
    """
    out = run_python(probe, env={"PYTHONPATH": stand_in, "FLAGOS_DISABLE_APEX_COMPAT": "1"}, check=True)
    assert out.stdout.split() == ["flagos", "False"]


def test_strict_host_plugin_has_no_stock_device_and_no_patch(stand_in):
    probe = "import torch, torch_fl\nprint('apex' in torch_fl.compat._installed)"
    out = run_python(probe, env={"PYTHONPATH": stand_in, "FLAGOS_PLUGIN": "host", "FLAGOS_PLUGIN_OPTIONS": "strict=1"},
                     check=True)
    assert out.stdout.split() == ["False"]
