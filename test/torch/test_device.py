"""Device management through torch.flagos (the torch.cuda-shaped module):
count, current device, the device context, invalid indices, properties,
per-thread current device. Fork and spawn are in test_fork.py."""

import threading

import pytest
import torch

import torch_fl

F = torch.flagos


def test_backend_is_registered_as_flagos():
    assert torch._C._get_privateuse1_backend_name() == "flagos"
    assert torch.get_device_module("flagos") is F
    assert torch.device("flagos").type == "flagos"


def test_renaming_the_backend_again_is_refused():
    torch.utils.rename_privateuse1_backend("flagos")  # the same name is allowed
    with pytest.raises(RuntimeError, match="has already been set"):
        torch.utils.rename_privateuse1_backend("someother")


def test_device_count_matches_the_plugin():
    assert F.is_available()
    assert F.device_count() == torch_fl.plugin_info()["device_count"]
    assert F.device_count() == torch.accelerator.device_count()


def test_is_initialized_after_first_tensor():
    torch.ones(1, device="flagos")
    assert F.is_initialized()
    F.init()  # idempotent
    assert F.is_initialized()


@pytest.mark.two_devices
def test_set_device_and_current_device():
    start = F.current_device()
    try:
        F.set_device(1)
        assert F.current_device() == 1
        assert torch.accelerator.current_device_index() == 1
        F.set_device("flagos:0")
        assert F.current_device() == 0
        F.set_device(torch.device("flagos", 1))
        assert F.current_device() == 1
    finally:
        F.set_device(start)


@pytest.mark.two_devices
def test_new_tensors_go_to_the_current_device():
    start = F.current_device()
    try:
        F.set_device(1)
        assert torch.empty(2, device="flagos").device == torch.device("flagos", 1)
        assert torch.ones(2, device="flagos").cpu().tolist() == [1.0, 1.0]
    finally:
        F.set_device(start)
    assert torch.empty(2, device="flagos").device == torch.device("flagos", start)


@pytest.mark.two_devices
def test_device_context_switches_and_restores():
    start = F.current_device()
    other = 1 - start
    with F.device(other):
        assert F.current_device() == other
        assert torch.zeros(1, device="flagos").device.index == other
        with F.device(start):
            assert F.current_device() == start
        assert F.current_device() == other
    assert F.current_device() == start


@pytest.mark.two_devices
def test_device_context_restores_after_an_exception():
    start = F.current_device()
    with pytest.raises(ValueError, match="inside"):
        with F.device(1 - start):
            raise ValueError("inside")
    assert F.current_device() == start


def test_device_context_with_none_or_negative_is_a_no_op():
    start = F.current_device()
    with F.device(None):
        assert F.current_device() == start
    with F.device(-1):
        assert F.current_device() == start


@pytest.mark.two_devices
def test_device_of_follows_the_tensor():
    x = torch.ones(1, device="flagos:1")
    start = F.current_device()
    with F.device_of(x):
        assert F.current_device() == 1
    assert F.current_device() == start
    with F.device_of(torch.ones(1)):  # a CPU tensor changes nothing
        assert F.current_device() == start


def test_invalid_device_index_is_rejected():
    bad = F.device_count()
    with pytest.raises(RuntimeError, match=r"\[flagos\] device index .* is out of range"):
        F.set_device(bad)
    with pytest.raises(RuntimeError, match="out of range"):
        torch.empty(1, device=f"flagos:{bad}")
    with pytest.raises(RuntimeError, match="out of range"):
        torch.ones(1).to(f"flagos:{bad}")
    with pytest.raises(RuntimeError, match="out of range"):
        F.get_device_properties(bad)


def test_device_state_survives_errors():
    start = F.current_device()
    with pytest.raises(RuntimeError):
        F.set_device(F.device_count() + 3)
    assert F.current_device() == start
    assert (torch.ones(2, device="flagos") + 1).cpu().tolist() == [2.0, 2.0]


def test_non_flagos_device_is_rejected_by_the_module():
    with pytest.raises(ValueError, match=r"\[flagos\] expected a flagos device"):
        F.set_device("cpu")


@pytest.mark.two_devices
def test_ops_run_on_the_operand_device_without_moving_the_current_one():
    start = F.current_device()
    x = torch.arange(4.0, device="flagos:1")
    y = x * 2 + 1
    assert y.device == torch.device("flagos", 1)
    assert y.cpu().tolist() == [1.0, 3.0, 5.0, 7.0]
    assert F.current_device() == start


@pytest.mark.two_devices
@pytest.mark.parametrize("op", [
    pytest.param(lambda a, b: a + b, id="add"),
    pytest.param(lambda a, b: a.add_(b), id="add_"),
    pytest.param(lambda a, b: a @ b, id="matmul"),
    pytest.param(lambda a, b: torch.cat([a, b]), id="cat"),
    pytest.param(lambda a, b: torch.where(a > 0, a, b), id="where"),
])
def test_an_op_given_two_devices_tensors_is_refused_as_on_cuda(op):
    """Native CUDA refuses an op whose operands sit on two GPUs; so does
    flagos, in CUDA's words (code may match them) naming flagos devices,
    before the kernel touches anything."""
    a = torch.ones(3, device="flagos:0")
    b = torch.full((3,), 2.0, device="flagos:1")
    pattern = ("Expected all tensors to be on the same device, but found at least two devices, "
               "flagos:0 and flagos:1")
    with pytest.raises(RuntimeError, match=pattern) as caught:
        op(a, b)
    assert str(caught.value).startswith("[flagos] aten::"), str(caught.value)
    assert a.cpu().tolist() == [1.0] * 3  # add_ wrote nothing
    assert op(a, b.to("flagos:0")).device == torch.device("flagos", 0)


@pytest.mark.two_devices
def test_foreach_ops_take_lists_that_span_devices():
    """Foreach ops take lists that span devices (per-tensor work), as on
    CUDA. Their new results land on each tensor's device on a CUDA-ABI
    plugin and through the copy path (cpu_fallback) of a plugin whose memory
    the host cannot address; a host kernel run in place on host-addressable
    memory cannot say which device its results belong to, so there the
    out-of-place form is refused in one clear error."""
    xs = [torch.ones(4, device="flagos:0"), torch.full((4,), 2.0, device="flagos:1")]
    ys = [torch.full((4,), 10.0, device="flagos:0"), torch.full((4,), 20.0, device="flagos:1")]
    torch._foreach_mul_(xs, 3.0)
    torch._foreach_add_(xs, ys)
    assert [t.device.index for t in xs] == [0, 1]
    assert [t.cpu().tolist() for t in xs] == [[13.0] * 4, [26.0] * 4]
    if "host_addressable" not in torch_fl.flagos.get_device_properties(0).capabilities:
        out = torch._foreach_add(xs, ys)
        assert [t.device.index for t in out] == [0, 1]
        assert [t.cpu().tolist() for t in out] == [[23.0] * 4, [46.0] * 4]
    else:
        with pytest.raises(RuntimeError, match=r"^\[flagos\] aten::_foreach_add.List: a call over tensors of "
                                               r"flagos:0 and flagos:1 returns new tensors, which a kernel run "
                                               r"on the host cannot place"):
            torch._foreach_add(xs, ys)
        assert [t.cpu().tolist() for t in xs] == [[13.0] * 4, [26.0] * 4]


def test_device_properties():
    props = F.get_device_properties(0)
    assert isinstance(props.name, str) and props.name
    assert props.total_memory > 0
    assert props.multi_processor_count >= 1
    assert isinstance(props.capabilities, list)
    assert F.get_device_name(0) == props.name
    assert F.get_device_capability(0) == (props.major, props.minor)
    assert F.get_device_properties().name == F.get_device_properties(F.current_device()).name
    assert props.name in repr(props)
    assert props.arch in F.get_arch_list()


def test_device_capability_lists_every_dtype():
    supported = torch.accelerator.get_device_capability(0)["supported_dtypes"]
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
                  torch.int64, torch.bool, torch.complex64, torch.complex32):
        assert dtype in supported


def test_mem_get_info_is_free_and_total():
    free, total = F.mem_get_info(0)
    assert 0 <= free <= total
    assert total > 0
    assert tuple(torch.accelerator.get_memory_info(0))[1] == total


def test_current_device_is_per_thread():
    main_device = F.current_device()
    target = F.device_count() - 1
    seen = {}

    def worker():
        F.set_device(target)
        seen["inside"] = F.current_device()
        seen["tensor"] = torch.ones(1, device="flagos").device.index

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"inside": target, "tensor": target}
    assert F.current_device() == main_device


def test_concurrent_operations_on_all_devices():
    errors = []
    results = {}

    def worker(i):
        try:
            d = i % F.device_count()
            with F.device(d):
                x = torch.full((64,), float(i), device="flagos")
                for _ in range(10):
                    x = x + 1
                results[i] = (x.device.index, x.cpu().sum().item())
        except Exception as e:  # surfaced in the main thread below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, (index, total) in results.items():
        assert index == i % F.device_count()
        assert total == 64 * (i + 10)


@pytest.mark.parametrize("form", [None, 0, "flagos:0", torch.device("flagos", 0)], ids=str)
def test_synchronize_accepts_every_device_form(form, delay):
    s = F.Stream(0)
    delay(s, 0.05)
    F.synchronize(form)
    assert s.query()
