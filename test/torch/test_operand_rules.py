"""What a kernel's operands may be on flagos, as on native CUDA: statistics a
kernel writes without a schema annotation come back (BatchNorm's running
mean and variance), a CPU tensor beside flagos ones is refused where CUDA
refuses it, in-place ops see their operands overlap, and a result flagos
cannot hold (sparse, mkldnn) is one clear error."""

import pytest
import torch

import torch_fl

CONFS = torch_fl._routing.confs_dir()


BATCH_NORM_STATS = """
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5, 5)
    cpu, dev = torch.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3).to("flagos")
    for _ in range(2):
        cpu(x); dev(x.to("flagos"))
    torch.testing.assert_close(dev.running_mean.cpu(), cpu.running_mean)
    torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var)
    cpu.eval(); dev.eval()
    torch.testing.assert_close(dev(x.to("flagos")).cpu(), cpu(x))
    mean, var = torch.zeros(3), torch.ones(3)
    dmean, dvar = mean.to("flagos"), var.to("flagos")
    torch.batch_norm_update_stats(x, mean, var, 0.5)
    torch.batch_norm_update_stats(x.to("flagos"), dmean, dvar, 0.5)
    torch.testing.assert_close(dmean.cpu(), mean)
    torch.testing.assert_close(dvar.cpu(), var)
    print("ok")
"""


def test_batch_norm_running_stats_on_this_run():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5, 5)
    cpu, dev = torch.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3).to("flagos")
    cpu(x.flatten(2)), dev(x.flatten(2).to("flagos"))
    torch.testing.assert_close(dev.running_mean.cpu(), cpu.running_mean)
    torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var)


def test_batch_norm_running_stats_on_the_cpu_fallback(run_flagos):
    # default.toml lists no route: every operator takes the copying fallback,
    # which must copy back what native_batch_norm writes unannotated.
    assert run_flagos(BATCH_NORM_STATS, env={"FLAGOS_BACKEND_CONFIG": f"{CONFS}/default.toml"}).strip() == "ok"


@pytest.mark.parametrize("make", [
    lambda a, b: torch.block_diag(a, b),
    lambda a, b: a + b,
    lambda a, b: a @ b,
    lambda a, b: torch.cat([a, b]),
    lambda a, b: torch.where(a > 0, a, b),
], ids=["block_diag", "add", "mm", "cat", "where"])
def test_a_cpu_tensor_beside_a_flagos_one_is_refused(make):
    a, b = torch.ones(2, 2, device="flagos"), torch.ones(2, 2)
    # torch's words; some kernels (block_diag's on CUDA) have their own.
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device|"
                                           "must all be on the same device"):
        make(a, b)
    assert (a + 1).sum().item() == 8  # the process goes on


def test_what_cuda_accepts_from_the_cpu_is_accepted():
    a = torch.arange(6.0, device="flagos").reshape(2, 3)
    assert torch.equal((a + torch.tensor(2.0)).cpu(), torch.arange(6.0).reshape(2, 3) + 2)  # 0-dim CPU scalar
    assert torch.equal(a[torch.tensor([1])].cpu(), torch.tensor([[3.0, 4.0, 5.0]]))  # host indices
    a[torch.tensor([0])] = torch.tensor(9.0)
    assert a[0].tolist() == [9.0, 9.0, 9.0]
    b = torch.empty(3, device="flagos").copy_(torch.tensor([1.0, 2.0, 3.0]))
    assert b.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("op", ["index_add_", "scatter_"])
def test_an_in_place_op_over_its_own_overlapping_view_is_refused(op):
    for device in ("cpu", "flagos"):
        x = torch.arange(10.0, device=device)
        index = torch.arange(3, device=device)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            getattr(x[1:], op)(0, index, x[:3])


def test_views_of_one_storage_still_compute_right():
    x = torch.arange(10.0, device="flagos")
    y = x[:5] + x[5:]
    assert y.tolist() == [5.0, 7.0, 9.0, 11.0, 13.0]
    x[:5].add_(x[5:])
    assert x.tolist()[:5] == [5.0, 7.0, 9.0, 11.0, 13.0]


@pytest.mark.parametrize("convert,layout", [
    (lambda t: t.to_sparse(), "sparse COO"),
    (lambda t: t.to_sparse_csr(), "compressed sparse"),
    (lambda t: t.to_mkldnn(), "mkldnn"),
    (lambda t: torch.quantize_per_tensor(t, 0.1, 0, torch.qint8), "quantized"),
], ids=["to_sparse", "to_sparse_csr", "to_mkldnn", "quantize_per_tensor"])
def test_an_unsupported_layout_is_one_clear_error(convert, layout):
    x = torch.randn(3, 3, device="flagos")
    with pytest.raises(RuntimeError, match=rf"^\[flagos\] aten::\w+(\.\w+)? returns a {layout} tensor, and flagos "
                                           "tensors are plain strided ones"):
        convert(x)
    assert convert(x.cpu()).device.type == "cpu"  # on the CPU it works, and the process goes on
    assert (x + 1).shape == (3, 3)
