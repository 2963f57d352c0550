"""Dtypes CUDA's kernels take and the CPU's do not, which flagos takes on
every plugin as CUDA does (core/aten/host_dtype_gaps.h): code written for
CUDA branches on the device type and hands flagos what it hands CUDA."""

import pytest
import torch

import torch_fl  # noqa: F401


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int16])
def test_histc_counts_integers_as_cuda_does(dtype):
    # transformers' MoE routing: expert ids as int32 off the CPU.
    ids = torch.tensor([0, 3, 3, 1, 2, 3, 0, 7], dtype=dtype)
    got = torch.histc(ids.to("flagos"), bins=4, min=0, max=3)
    assert got.dtype == dtype and got.device.type == "flagos"
    # Out of range (7) is not counted, as in the float kernel.
    assert got.cpu().tolist() == [2, 1, 1, 3]
    out = torch.empty(0, dtype=dtype, device="flagos")
    torch.histc(ids.to("flagos"), bins=4, min=0, max=3, out=out)
    assert out.cpu().tolist() == [2, 1, 1, 3]


def test_histc_on_floats_is_the_cpu_kernel():
    x = torch.randn(1000, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(torch.histc(x.to("flagos"), bins=10).cpu(), torch.histc(x, bins=10))
