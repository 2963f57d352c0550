"""What boxing must give back (routes/boxing.cpp), through the default
stock route (cpu on the host plugin, cuda on the CUDA plugin): written operands stay the caller's tensors with the
kernel's values and shapes, results that alias an operand share its flagos
storage, fresh results own theirs. Expected values come from the CPU."""

import pytest
import torch

import torch_fl


def params(n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(3, 4, generator=g) + 0.5 for _ in range(n)]


def flagos(tensors):
    return [t.to("flagos") for t in tensors]


def test_the_default_routes_box_these_ops():
    # Otherwise the tests below would not test boxing (on the strict host
    # plugin they test the cpu_fallback route's copies instead).
    info = torch_fl.plugin_info()
    if info["options"].get("strict") == "1":
        pytest.skip("the strict host plugin's memory is not host-addressable: no boxing")
    stock = {"host": "cpu", "cuda": "cuda"}.get(info["name"])
    if stock is None:
        pytest.skip(f"no stock route on the {info['name']} plugin")
    for op in ("_foreach_add_.List", "_foreach_addcdiv_.ScalarList", "_foreach_sqrt", "mul.out", "_unsafe_view"):
        assert torch_fl.routes(op)[0]["route"] == stock, op


def test_in_place_foreach_with_the_same_tensors_in_two_lists():
    cpu = params()
    dev = flagos(cpu)
    ptrs = [t.data_ptr() for t in dev]
    torch._foreach_add_(dev, dev)
    torch._foreach_add_(cpu, cpu)
    assert [t.data_ptr() for t in dev] == ptrs
    for d, c in zip(dev, cpu):
        assert torch.equal(d.cpu(), c)


def test_adamw_style_foreach_updates_match_the_cpu():
    cpu_p, cpu_a, cpu_b = params(seed=1), params(seed=2), params(seed=3)
    dev_p, dev_a, dev_b = flagos(cpu_p), flagos(cpu_a), flagos(cpu_b)
    steps = [-0.1 * (i + 1) for i in range(len(cpu_p))]
    for p, a, b in ((cpu_p, cpu_a, cpu_b), (dev_p, dev_a, dev_b)):
        torch._foreach_mul_(a, 0.9)
        torch._foreach_addcmul_(a, b, b, value=0.1)
        denom = torch._foreach_sqrt(a)
        torch._foreach_addcdiv_(p, b, denom, steps)
    for group_dev, group_cpu in ((dev_p, cpu_p), (dev_a, cpu_a)):
        for d, c in zip(group_dev, group_cpu):
            torch.testing.assert_close(d.cpu(), c)


def test_out_of_place_foreach_results_are_fresh_tensors():
    dev = flagos(params())
    roots = torch._foreach_sqrt(dev)
    ptrs = {t.untyped_storage().data_ptr() for t in dev}
    assert all(r.device.type == "flagos" and r.untyped_storage().data_ptr() not in ptrs for r in roots)
    roots[0].fill_(7)
    assert not torch.equal(dev[0].cpu(), torch.full((3, 4), 7.0))


def test_an_out_argument_is_resized_and_keeps_its_identity():
    x = torch.arange(6.0).reshape(2, 3)
    out = torch.empty(0, device="flagos")
    result = torch.mul(x.to("flagos"), 2, out=out)
    assert result is out
    assert out.shape == (2, 3)
    assert torch.equal(out.cpu(), x * 2)


def test_an_out_argument_that_is_also_an_input():
    x = torch.arange(6.0)
    dev = x.to("flagos")
    torch.mul(dev, dev, out=dev)
    assert torch.equal(dev.cpu(), x * x)


def test_a_result_that_aliases_its_operand_shares_the_flagos_storage():
    dev = torch.arange(9.0, device="flagos").reshape(3, 3)
    flat = torch.ops.aten._unsafe_view(dev, [9])
    assert flat.untyped_storage().data_ptr() == dev.untyped_storage().data_ptr()
    flat[0] = 42.0
    assert dev[0, 0].item() == 42.0


@pytest.mark.parametrize("n", [1, 40, 300])
def test_foreach_over_many_tensors(n):
    cpu = params(n, seed=n)
    dev = flagos(cpu)
    torch._foreach_mul_(dev, 3.0)
    torch._foreach_mul_(cpu, 3.0)
    assert all(torch.equal(d.cpu(), c) for d, c in zip(dev, cpu))


def test_a_fresh_result_is_a_flagos_tensor_through_and_through():
    # Boxing re-labels a kernel's fresh result in place (device and dispatch
    # keys): the result must dispatch like any flagos tensor, autocast and
    # autograd included, and know nothing of the stock device.
    x = torch.rand(4, 4, device="flagos")
    y = x + x  # a fresh result of the stock kernel
    keys = str(torch._C._dispatch_keys(y))
    assert y.device.type == "flagos" and not y.is_cpu and not y.is_cuda
    assert "PrivateUse1" in keys and "AutocastPrivateUse1" in keys
    assert "CPU" not in keys.replace("PrivateUse1", "") and "CUDA" not in keys
    assert y.untyped_storage().device.type == "flagos"
    with torch.autocast("flagos", dtype=torch.bfloat16):
        assert (y @ y).dtype == torch.bfloat16  # autocast reaches the result
    w = (x * 2).requires_grad_()
    (w.sin() * 3).sum().backward()
    torch.testing.assert_close(w.grad.cpu(), 3 * torch.cos(x.cpu() * 2))
    assert w.grad.device.type == "flagos"


@pytest.mark.parametrize("op", ["add_", "mul_", "div_", "masked_fill_", "fill_", "zero_"])
def test_an_in_place_op_returns_the_callers_own_tensor(op):
    # These take the typed kernel (routes/typed_boxing.h), whose Tensor&
    # return must be the caller's flagos tensor, not the kernel's alias.
    cpu = torch.arange(1.0, 7.0).reshape(2, 3)
    other = torch.full((2, 3), 2.0)
    args = {"add_": (other,), "mul_": (other,), "div_": (other,),
            "masked_fill_": (other > 1.5, -1.0), "fill_": (5.0,), "zero_": ()}[op]
    dev = cpu.to("flagos")
    ptr, version = dev.data_ptr(), dev._version
    result = getattr(dev, op)(*[a.to("flagos") if isinstance(a, torch.Tensor) else a for a in args])
    expected = getattr(cpu.clone(), op)(*args)
    assert result is dev
    assert dev.data_ptr() == ptr and dev._version > version
    torch.testing.assert_close(dev.cpu(), expected)


def test_operands_of_every_layout_in_turn():
    # Each call's operand aliases are reused by the thread's next call
    # (routes/boxing_call.cpp): dtype, sizes, strides, offset and the
    # conjugate/negative bits must all be those of the new operand.
    g = torch.Generator().manual_seed(3)
    base = torch.randn(6, 8, generator=g)
    square = torch.randn(5, 5, generator=g)
    z = torch.complex(base, base.flip(0))
    # Neighbours differing in one thing only: strides (square, square.t()),
    # offset (the views of one flagos tensor), dtype (base, base.double(), ...).
    plain = [base, base.t(), base[1:, 2:5], base[::2, ::3], base.reshape(-1)[5:], square, square.t(),
             base.double(), base.to(torch.bfloat16), base.long(), z]
    cases = [(t, lambda t=t: t.to("flagos")) for t in plain] + [
        (base.reshape(-1)[:20], lambda: base.to("flagos").reshape(-1)[:20]),
        (base.reshape(-1)[7:27], lambda: base.to("flagos").reshape(-1)[7:27]),
        (base[1:, 2:5], lambda: base.to("flagos")[1:, 2:5]),
        (z.conj(), lambda: z.to("flagos").conj()),               # the conjugate bit
        (z._neg_view(), lambda: z.to("flagos")._neg_view()),     # the negative bit
        (z.conj()._neg_view(), lambda: z.to("flagos").conj()._neg_view()),
    ]
    for _ in range(3):
        for cpu, make in cases:
            dev = make()
            assert dev.is_conj() == cpu.is_conj() and dev.is_neg() == cpu.is_neg()
            torch.testing.assert_close(torch.mul(dev, dev).cpu(), torch.mul(cpu, cpu))
            torch.testing.assert_close(torch.add(dev, 1).cpu(), torch.add(cpu, 1))
            torch.testing.assert_close(dev.clone().cpu(), cpu.clone())
    # A view result outlives later calls on the same (reused) aliases.
    dev = torch.arange(12.0, device="flagos").reshape(3, 4)
    flat = torch.ops.aten._unsafe_view(dev, [12])
    for _ in range(5):
        torch.mul(dev, 2)
    dev[0, 0] = -1.0
    assert flat[0].item() == -1.0 and flat.device.type == "flagos"


def test_foreach_results_are_flagos_tensors_through_and_through():
    roots = torch._foreach_sqrt(flagos(params()))
    for r in roots:
        keys = str(torch._C._dispatch_keys(r))
        assert r.device.type == "flagos" and "PrivateUse1" in keys and "CUDA" not in keys
        assert "CPU" not in keys.replace("PrivateUse1", "")


def test_every_typed_kernel_names_an_operator_routed_to_the_stock_device():
    # Typed kernels (routes/typed_boxing_ops.cpp) are found by routing name at
    # install: a name matching no operator would silently leave that operator
    # on the slower boxed kernel.
    info = torch_fl.plugin_info()
    stock = {"host": "cpu", "cuda": "cuda"}.get(info["name"])
    if stock is None or info["options"].get("strict") == "1":
        pytest.skip("no stock route here")
    names = torch_fl._C._typed_boxing_ops()
    routed = 0
    for op in names:
        route = torch_fl.routes(op)[0]
        assert "no such operator" not in route["why"], op
        routed += route["route"] == stock
    # The rest have no kernel for the stock device in this torch (CUDA's fused
    # attention on a CPU torch, flash attention for CPU on a CUDA one).
    assert len(names) >= 70 and routed >= len(names) - 6


def test_a_typed_kernel_serves_only_the_schema_it_was_compiled_for():
    # Each typed kernel is compiled against one torch's at::_ops signature; at
    # install its schema is compared with this torch's, and a difference
    # leaves the operator on the boxed route (slower, never misread).
    mismatch = torch_fl._C._typed_schema_mismatch
    for op in torch_fl._C._typed_boxing_ops():
        name, _, overload = op.partition(".")
        registered = str(torch._C._get_schema(f"aten::{name}", overload)).removeprefix("aten::")
        assert mismatch(registered) == "", op
    assert mismatch("mm(Tensor self, Tensor mat2, int extra) -> Tensor") == "this torch declares aten::mm differently"
    assert mismatch("mm(Tensor self, Tensor mat2) -> Tensor(a)") == "this torch declares aten::mm differently"
    assert mismatch("no_such_op(Tensor self) -> Tensor") == "this torch has no aten::no_such_op"
    assert mismatch("mm(Tensor self") == "its compiled schema does not parse"
