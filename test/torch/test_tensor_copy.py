"""Tensor creation and copies in every direction: host to device, device to
host, within a device and across two devices; with dtype changes, strided
operands, broadcasts, slices as destinations, empty and 0-dim tensors.
Expected values always come from the same copy done on the CPU."""

import pytest
import torch

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]

ROUTES = [
    pytest.param("cpu", "flagos:0", id="h2d"),
    pytest.param("flagos:0", "cpu", id="d2h"),
    pytest.param("flagos:0", "flagos:0", id="d2d"),
    pytest.param("flagos:0", "flagos:1", id="d0_to_d1", marks=pytest.mark.two_devices),
    pytest.param("flagos:1", "flagos:0", id="d1_to_d0", marks=pytest.mark.two_devices),
    pytest.param("cpu", "flagos:1", id="h2d1", marks=pytest.mark.two_devices),
    pytest.param("flagos:1", "cpu", id="d1_to_h", marks=pytest.mark.two_devices),
]


def sample(dtype, shape=(4, 6), start=0):
    values = torch.arange(start, start + torch.Size(shape).numel()).reshape(shape)
    if dtype == torch.bool:
        return values % 3 == 0
    if dtype.is_complex:
        return (values + 1j * (values % 5)).to(dtype)
    return (values % 100).to(dtype)


def cpu_copy(dst, src):
    """What copy_ must produce: the same copy done with CPU tensors."""
    expected = dst.cpu().clone()
    expected.copy_(src.cpu())
    return expected


# ---------------------------------------------------------------- factories


def test_empty_has_shape_dtype_and_device():
    x = torch.empty(3, 4, dtype=torch.float16, device="flagos")
    assert x.shape == (3, 4) and x.dtype == torch.float16
    assert x.device == torch.device("flagos", torch.flagos.current_device())
    assert x.is_flagos and x.is_contiguous()


def test_empty_strided_keeps_strides():
    x = torch.empty_strided((2, 3), (1, 2), device="flagos")
    assert x.stride() == (1, 2)
    x.copy_(torch.arange(6.0).reshape(2, 3))
    assert torch.equal(x.cpu(), torch.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("fmt", [torch.channels_last, torch.contiguous_format])
def test_empty_with_memory_format(fmt):
    x = torch.empty(2, 3, 4, 5, device="flagos", memory_format=fmt)
    assert x.is_contiguous(memory_format=fmt)
    ref = torch.randn(2, 3, 4, 5)
    x.copy_(ref)
    assert torch.equal(x.cpu(), ref)
    assert x.contiguous(memory_format=fmt).data_ptr() == x.data_ptr()


def test_zero_size_tensors():
    x = torch.empty(0, 3, device="flagos")
    assert x.numel() == 0 and x.shape == (0, 3)
    assert x.cpu().shape == (0, 3)
    y = torch.empty(0, 3)
    y.copy_(x)
    assert torch.ones(0, device="flagos").sum().item() == 0


def test_filled_factories():
    assert torch.zeros(2, 3, device="flagos").cpu().eq(0).all()
    assert torch.ones(5, dtype=torch.int64, device="flagos").cpu().tolist() == [1] * 5
    assert torch.full((2,), 7.5, device="flagos").cpu().tolist() == [7.5, 7.5]
    assert torch.arange(5, device="flagos").cpu().tolist() == list(range(5))
    assert torch.equal(torch.eye(3, device="flagos").cpu(), torch.eye(3))
    assert torch.equal(torch.linspace(0, 1, 5, device="flagos").cpu(), torch.linspace(0, 1, 5))
    assert torch.tensor([[1, 2], [3, 4]], device="flagos").cpu().tolist() == [[1, 2], [3, 4]]


def test_random_factories_have_the_right_shape_and_range():
    r = torch.rand(1000, device="flagos").cpu()
    assert r.min() >= 0 and r.max() < 1
    n = torch.randn(4, 5, device="flagos")
    assert n.shape == (4, 5) and n.device.type == "flagos"
    i = torch.randint(3, 9, (1000,), device="flagos").cpu()
    assert i.min() >= 3 and i.max() < 9
    p = torch.randperm(10, device="flagos").cpu()
    assert sorted(p.tolist()) == list(range(10))


@pytest.mark.two_devices
def test_like_and_new_factories_keep_the_device():
    x = torch.ones(2, 2, device="flagos:1")
    for y in (torch.zeros_like(x), torch.empty_like(x), torch.ones_like(x), torch.randn_like(x),
              x.new_zeros(3), x.new_ones(3), x.new_full((3,), 2.0), x.new_empty(3), x.new_tensor([1.0])):
        assert y.device == torch.device("flagos", 1)
    assert torch.full_like(x, 3.0).cpu().eq(3).all()


def test_requires_grad_factory():
    x = torch.ones(3, device="flagos", requires_grad=True)
    assert x.requires_grad and x.is_leaf


# ---------------------------------------------------------------- copies


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_to_moves_values(src_dev, dst_dev, dtype):
    ref = sample(dtype)
    src = ref.to(src_dev)
    out = src.to(dst_dev)
    assert out.device == torch.device(dst_dev)
    assert out.dtype == dtype
    assert torch.equal(out.cpu(), ref)
    if src_dev == dst_dev:
        assert out.data_ptr() == src.data_ptr()  # .to() to the same device is a no-op
        assert src.to(dst_dev, copy=True).data_ptr() != src.data_ptr()


CASTS = {  # the source, made from a CPU tensor by a function that any device runs
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "channels_last": lambda t: t.reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last),
    "expanded": lambda t: t[:1].expand(4, 6),
    "offset_slice": lambda t: t[1:, 2:],
}


@pytest.mark.parametrize("layout", CASTS)
@pytest.mark.parametrize("spelling", ["dtype", "device_and_dtype", "index_less_device"])
def test_same_device_casts_match_the_cpu(layout, spelling):
    # Autocast's casts: .to(dtype) within the device (a boxed _to_copy) keeps
    # torch's layout rules (preserve_format) and never aliases its source.
    src = CASTS[layout](sample(torch.float32).to("flagos:0"))
    ref = CASTS[layout](sample(torch.float32))
    args = {"dtype": (torch.float16,), "device_and_dtype": ("flagos:0", torch.float16),
            "index_less_device": ("flagos", torch.float16)}[spelling]
    out = src.to(*args)
    expected = ref.to(torch.float16)
    assert out.device == torch.device("flagos", 0) and out.dtype == torch.float16
    assert out.stride() == expected.stride()
    assert torch.equal(out.cpu(), expected)
    assert out.untyped_storage().data_ptr() != src.untyped_storage().data_ptr()
    assert torch.equal(src.cpu(), ref)  # the source is untouched


def test_casts_of_conjugate_and_negative_views_and_with_a_memory_format():
    z = (sample(torch.complex64)).to("flagos:0")
    assert torch.equal(z.conj().to(torch.complex128).cpu(), sample(torch.complex64).conj().to(torch.complex128))
    x = sample(torch.float32).reshape(1, 2, 3, 4)
    out = x.to("flagos:0").to(torch.float64, memory_format=torch.channels_last)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(out.cpu(), x.double())


def test_casts_that_change_device_still_move_the_values():
    x = sample(torch.float32)
    assert torch.equal(x.to("flagos:0", torch.float16).cpu(), x.half())  # host -> flagos, with a cast
    assert torch.equal(x.to("flagos:0").to("cpu", torch.float64), x.double())  # flagos -> host, with a cast


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
@pytest.mark.parametrize("src_dtype,dst_dtype", [
    (torch.float32, torch.int32), (torch.int64, torch.float16), (torch.float64, torch.bfloat16),
    (torch.bool, torch.float32), (torch.float32, torch.complex64), (torch.uint8, torch.int8)], ids=str)
def test_copy_converts_dtype(src_dev, dst_dev, src_dtype, dst_dtype):
    src = sample(src_dtype).to(src_dev)
    dst = torch.zeros(4, 6, dtype=dst_dtype, device=dst_dev)
    dst.copy_(src)
    assert torch.equal(dst.cpu(), cpu_copy(dst, src))
    assert torch.equal(src.to(dst_dev, dst_dtype).cpu(), sample(src_dtype).to(dst_dtype))


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_from_a_strided_source(src_dev, dst_dev):
    base = sample(torch.float32, (6, 8)).to(src_dev)
    src = base.t()[1:5, ::2]  # transposed, offset, stepped
    dst = torch.empty(src.shape, device=dst_dev)
    dst.copy_(src)
    assert torch.equal(dst.cpu(), base.cpu().t()[1:5, ::2])
    assert torch.equal(src.to(dst_dev).cpu(), base.cpu().t()[1:5, ::2])


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_into_a_slice_keeps_the_other_elements(src_dev, dst_dev):
    dst = torch.full((5, 7), -1.0, device=dst_dev)
    src = sample(torch.float32, (5, 3), start=100).to(src_dev)
    dst[:, 2:5].copy_(src)
    expected = torch.full((5, 7), -1.0)
    expected[:, 2:5] = src.cpu()
    assert torch.equal(dst.cpu(), expected)


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_into_a_strided_destination_with_dtype_change(src_dev, dst_dev):
    dst = torch.zeros(6, 4, dtype=torch.float64, device=dst_dev).t()
    src = sample(torch.int32, (4, 6)).to(src_dev)
    dst.copy_(src)
    assert torch.equal(dst.cpu(), cpu_copy(dst, src))


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_broadcasts_the_source(src_dev, dst_dev):
    src = torch.arange(6.0).to(src_dev)
    dst = torch.zeros(4, 6, device=dst_dev)
    dst.copy_(src)
    assert torch.equal(dst.cpu(), torch.arange(6.0).expand(4, 6))
    dst.copy_(torch.tensor(2.5).to(src_dev))  # 0-dim source
    assert dst.cpu().eq(2.5).all()


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_of_expanded_source(src_dev, dst_dev):
    src = torch.arange(3.0).to(src_dev).unsqueeze(1).expand(3, 4)
    dst = torch.empty(3, 4, device=dst_dev)
    dst.copy_(src)
    assert torch.equal(dst.cpu(), torch.arange(3.0).unsqueeze(1).expand(3, 4))


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_of_empty_and_0dim(src_dev, dst_dev):
    torch.empty(0, 4, device=dst_dev).copy_(torch.empty(0, 4, device=src_dev))
    scalar = torch.tensor(3.25, device=src_dev).to(dst_dev)
    assert scalar.dim() == 0 and scalar.item() == 3.25


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_large_copy(src_dev, dst_dev):
    ref = torch.randn(1 << 21)  # 8 MiB
    out = ref.to(src_dev).to(dst_dev)
    assert torch.equal(out.cpu(), ref)


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_conjugate_and_negative_views_are_resolved(src_dev, dst_dev):
    z = torch.tensor([1 + 2j, 3 - 4j])
    assert torch.equal(z.to(src_dev).conj().to(dst_dev).cpu(), z.conj().resolve_conj())
    r = torch.tensor([1.0, -2.0])
    assert torch.equal(torch._neg_view(r.to(src_dev)).to(dst_dev).cpu(), -r)


@pytest.mark.parametrize("src_dev,dst_dev", ROUTES)
def test_copy_into_conjugate_and_negative_views(src_dev, dst_dev):
    w = torch.tensor([1 + 2j, 3 - 4j])
    base = torch.zeros(2, dtype=torch.complex64, device=dst_dev)
    base.conj().copy_(w.to(src_dev))  # the view reads w, so the storage holds conj(w)
    assert torch.equal(base.cpu(), w.conj().resolve_conj())
    base.conj().copy_(w.to(src_dev).conj())  # equal bits on both sides
    assert torch.equal(base.cpu(), w)
    r = torch.zeros(2, device=dst_dev)
    torch._neg_view(r).copy_(torch.tensor([1.0, -2.0]).to(src_dev))
    assert r.cpu().tolist() == [-1.0, 2.0]


def test_copy_bigger_than_the_plugin_staging_buffer():
    ref = torch.randn(80 << 18)  # 80 MiB of pageable memory
    out = ref.to("flagos")
    assert torch.equal(out.cpu(), ref)


def test_overlapping_copies_are_refused_as_on_cpu():
    x = torch.arange(6.0, device="flagos")
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x[1:].copy_(x[:-1])
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        torch.zeros(1, device="flagos").expand(3).copy_(torch.ones(3, device="flagos"))
    x.copy_(x)  # the very same tensor is a no-op
    assert x.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.two_devices
def test_cross_device_copy_while_current_device_is_a_third_party():
    start = torch.flagos.current_device()
    src = sample(torch.float32).to("flagos:0")
    with torch.flagos.device(1):
        dst = torch.empty(4, 6, device="flagos:0")
        dst.copy_(src)
        back = src.to("flagos:1").to("flagos:0")
        assert torch.flagos.current_device() == 1
    assert torch.flagos.current_device() == start
    assert torch.equal(dst.cpu(), sample(torch.float32))
    assert torch.equal(back.cpu(), sample(torch.float32))


def test_non_blocking_from_pageable_memory_is_still_correct():
    ref = torch.randn(1000)
    x = ref.to("flagos", non_blocking=True)
    assert torch.equal(x.cpu(), ref)
    out = torch.empty(1000)
    out.copy_(x, non_blocking=True)
    torch.flagos.synchronize()
    assert torch.equal(out, ref)


def test_chained_device_writes_are_ordered():
    # Each write is queued on the current stream; the read must see the last.
    x = torch.zeros(256, device="flagos")
    for i in range(20):
        x.copy_(torch.full((256,), float(i)))
    assert x.cpu().eq(19).all()


# ---------------------------------------------------------------- item


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_item(dtype):
    ref = sample(dtype, (3,))[2]
    assert torch.tensor(ref.item(), dtype=dtype) == ref
    assert ref.to("flagos").item() == ref.item()


@pytest.mark.two_devices
def test_item_on_the_second_device():
    assert torch.tensor(4.5, device="flagos:1").item() == 4.5
    assert bool(torch.tensor(True, device="flagos:1"))
    assert int(torch.tensor(7, device="flagos:1")) == 7


def test_item_of_a_multi_element_tensor_is_an_error():
    with pytest.raises(RuntimeError):
        torch.ones(2, device="flagos").item()


# ---------------------------------------------------------------- views, set_, resize_


@pytest.mark.parametrize("make_view", [
    lambda x: x.view(6, 4), lambda x: x.reshape(2, 12), lambda x: x.t(), lambda x: x.permute(1, 0),
    lambda x: x[1:3], lambda x: x[:, 2], lambda x: x.narrow(1, 1, 3), lambda x: x.unsqueeze(0),
    lambda x: x[0].expand(5, 6), lambda x: x.as_strided((2, 2), (1, 6), 3), lambda x: x.unfold(1, 2, 2),
    lambda x: x.diagonal(), lambda x: x.split(2)[1], lambda x: x.flatten(), lambda x: x.detach(),
], ids=["view", "reshape", "t", "permute", "slice", "select", "narrow", "unsqueeze", "expand",
        "as_strided", "unfold", "diagonal", "split", "flatten", "detach"])
def test_views_share_storage_and_write_through(make_view):
    base = sample(torch.float32).to("flagos")
    view = make_view(base)
    assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert torch.equal(view.cpu(), make_view(sample(torch.float32)))
    view.fill_(-5.0)
    expected = sample(torch.float32)
    make_view(expected).fill_(-5.0)
    assert torch.equal(base.cpu(), expected)


def test_complex_real_views_share_storage():
    z = torch.tensor([1 + 2j, 3 - 1j], device="flagos")
    r = torch.view_as_real(z)
    assert r.untyped_storage().data_ptr() == z.untyped_storage().data_ptr()
    assert r.cpu().tolist() == [[1.0, 2.0], [3.0, -1.0]]
    back = torch.view_as_complex(r)
    assert back.data_ptr() == z.data_ptr()


def test_set_shares_the_source():
    src = torch.arange(6.0, device="flagos")
    t = torch.empty(0, device="flagos")
    t.set_(src)
    assert t.data_ptr() == src.data_ptr() and t.shape == src.shape
    t.set_(src.untyped_storage(), 2, (2, 2), (1, 2))
    assert t.cpu().tolist() == [[2.0, 4.0], [3.0, 5.0]]
    t.set_(src.untyped_storage())
    assert t.numel() == 6
    t.set_()
    assert t.numel() == 0


def test_set_rejects_a_storage_of_another_device():
    t = torch.empty(0, device="flagos")
    with pytest.raises(RuntimeError):
        t.set_(torch.arange(4.0).untyped_storage())


@pytest.mark.two_devices
def test_set_rejects_a_storage_of_the_other_flagos_device():
    t = torch.empty(0, device="flagos:0")
    with pytest.raises(RuntimeError, match=r"\[flagos\] set_"):
        t.set_(torch.ones(4, device="flagos:1").untyped_storage(), 0, (4,), (1,))


def test_resize_grows_and_keeps_the_prefix():
    x = torch.arange(4.0, device="flagos")
    x.resize_(10)
    assert x.untyped_storage().nbytes() >= 40
    assert x.cpu()[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    x.resize_(2, 2)
    assert x.cpu().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert x.untyped_storage().nbytes() >= 40  # shrinking keeps the storage


def test_resize_of_an_offset_view_grows_the_shared_storage():
    x = torch.arange(8.0, device="flagos")
    v = x[6:]
    v.resize_(5)
    assert v.untyped_storage().nbytes() >= (6 + 5) * 4
    assert v.cpu()[:2].tolist() == [6.0, 7.0]


def test_resize_with_channels_last():
    x = torch.empty(0, device="flagos").resize_(2, 3, 4, 4, memory_format=torch.channels_last)
    assert x.is_contiguous(memory_format=torch.channels_last)


def test_data_dependent_shapes():
    x = torch.arange(10.0, device="flagos")
    assert x.masked_select(x > 6).cpu().tolist() == [7.0, 8.0, 9.0]
    assert torch.nonzero(x.remainder(4) == 0).cpu().flatten().tolist() == [0, 4, 8]
    assert torch.unique(torch.tensor([3, 1, 3, 2], device="flagos")).cpu().tolist() == [1, 2, 3]


def test_in_place_ops_keep_the_data_ptr():
    x = torch.ones(16, device="flagos")
    ptr = x.data_ptr()
    x.add_(1).mul_(3).clamp_(max=5)
    assert x.data_ptr() == ptr
    assert x.cpu().eq(5).all()


def test_printing_shows_the_device():
    text = repr(torch.tensor([1.5, 2.0], device="flagos"))
    assert "device='flagos:" in text and "1.5000" in text


@pytest.mark.two_devices
def test_clone_and_contiguous_stay_on_their_device():
    x = sample(torch.float32).to("flagos:1").t()
    for y in (x.clone(), x.contiguous()):
        assert y.device == torch.device("flagos", 1)
        assert torch.equal(y.cpu(), sample(torch.float32).t())
    assert x.contiguous().is_contiguous()
