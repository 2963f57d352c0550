"""Automatic mixed precision on flagos: torch.autocast("flagos") with float16
and bfloat16 (matmul-like ops lowered, sensitive ops in float32, mixed
inputs promoted), the unsupported-dtype warning, and
torch.amp.GradScaler("flagos") including the inf/NaN skip."""

import pytest
import torch

F = torch.flagos
LOW = [torch.float16, torch.bfloat16]


def test_supported_dtypes_and_availability():
    assert F.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.amp.is_autocast_available("flagos")
    assert torch.get_autocast_dtype("flagos") == torch.float16


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_autocast_state(dtype):
    assert not torch.is_autocast_enabled("flagos")
    with torch.autocast("flagos", dtype=dtype):
        assert torch.is_autocast_enabled("flagos")
        assert torch.get_autocast_dtype("flagos") == dtype
        with torch.autocast("flagos", enabled=False):
            assert not torch.is_autocast_enabled("flagos")
    assert not torch.is_autocast_enabled("flagos")


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("op", [
    lambda a, b: a @ b, lambda a, b: torch.mm(a, b), lambda a, b: torch.matmul(a, b),
    lambda a, b: torch.addmm(b, a, b), lambda a, b: torch.nn.functional.linear(a, b),
    lambda a, b: torch.bmm(a.unsqueeze(0), b.unsqueeze(0)),
], ids=["matmul_op", "mm", "matmul", "addmm", "linear", "bmm"])
def test_matmul_like_ops_run_in_lower_precision(dtype, op):
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    with torch.autocast("flagos", dtype=dtype):
        out = op(a.to("flagos"), b.to("flagos"))
    assert out.dtype == dtype and out.device.type == "flagos"
    expected = op(a.to(dtype), b.to(dtype)).float()
    torch.testing.assert_close(out.float().cpu(), expected, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("op", [
    torch.exp, torch.log1p, torch.sum, lambda x: torch.softmax(x, -1), lambda x: torch.cumsum(x, 0),
    lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]),
    lambda x: torch.nn.functional.mse_loss(x, torch.zeros_like(x)),
], ids=["exp", "log1p", "sum", "softmax", "cumsum", "layer_norm", "mse_loss"])
def test_sensitive_ops_run_in_float32(dtype, op):
    x = torch.rand(4, 6, device="flagos").to(dtype)
    with torch.autocast("flagos", dtype=dtype):
        out = op(x)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.cpu(), op(x.cpu().float()))


def test_mixed_inputs_are_promoted_to_the_widest():
    a = torch.randn(5, device="flagos", dtype=torch.float16)
    b = torch.randn(5, device="flagos")
    with torch.autocast("flagos", dtype=torch.float16):
        assert torch.dot(a, b).dtype == torch.float32
        assert torch.cat([a, b]).dtype == torch.float32
        assert torch.addcmul(a, a, b).dtype == torch.float32
        assert torch.dot(a, a).dtype == torch.float16


def test_ops_outside_the_lists_keep_their_dtype():
    x = torch.randn(4, device="flagos")
    with torch.autocast("flagos", dtype=torch.float16):
        assert (x + x).dtype == torch.float32
        assert torch.relu(x).dtype == torch.float32


def test_integer_and_double_inputs_are_not_cast():
    d = torch.randn(3, 3, device="flagos", dtype=torch.float64)
    with torch.autocast("flagos", dtype=torch.float16):
        assert (d @ d).dtype == torch.float64


def test_cpu_tensors_are_untouched_by_flagos_autocast():
    a = torch.randn(4, 4)
    with torch.autocast("flagos", dtype=torch.float16):
        assert (a @ a).dtype == torch.float32


def test_unsupported_dtype_warns_and_disables():
    with pytest.warns(UserWarning, match="flagos autocast.*not supported"):
        with torch.autocast("flagos", dtype=torch.float32):
            assert not torch.is_autocast_enabled("flagos")


def test_module_forward_and_backward_under_autocast():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 1)).flagos()
    x = torch.randn(4, 8, device="flagos")
    with torch.autocast("flagos", dtype=torch.bfloat16):
        out = model(x)
        assert out.dtype == torch.bfloat16
        loss = out.float().pow(2).mean()
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.dtype == torch.float32


def make_step():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).flagos()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, opt, torch.randn(3, 4, device="flagos")


def test_grad_scaler_steps_and_unscales(rng_restored):
    model, opt, x = make_step()
    scaler = torch.amp.GradScaler("flagos", init_scale=1024.0)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.autocast("flagos", dtype=torch.float16):
        loss = model(x).float().sum()
    scaler.scale(loss).backward()
    scaled = model.weight.grad.clone()
    scaler.unscale_(opt)
    torch.testing.assert_close(model.weight.grad.cpu(), (scaled / 1024.0).cpu())
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0
    assert any(not torch.equal(b.cpu(), p.detach().cpu()) for b, p in zip(before, model.parameters()))


def test_grad_scaler_skips_a_step_with_inf_and_backs_off(rng_restored):
    model, opt, x = make_step()
    scaler = torch.amp.GradScaler("flagos", init_scale=1024.0, backoff_factor=0.5)
    before = [p.detach().cpu().clone() for p in model.parameters()]
    scaler.scale(model(x).sum()).backward()
    model.weight.grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 512.0
    for b, p in zip(before, model.parameters()):
        assert torch.equal(b, p.detach().cpu())  # the step was skipped


def test_grad_scaler_grows_after_the_interval(rng_restored):
    model, opt, x = make_step()
    scaler = torch.amp.GradScaler("flagos", init_scale=8.0, growth_factor=2.0, growth_interval=2)
    for _ in range(2):
        opt.zero_grad()
        scaler.scale(model(x).sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 16.0
