"""Streams: torch.Stream / torch.flagos.Stream creation, the current-stream
context, set_stream, query/synchronize, wait_stream, and that work really
runs in the order of the stream it was issued on (a delayed stream, from
the plugin's testing hook, keeps it observably pending)."""

import threading
import time

import pytest
import torch

F = torch.flagos
DELAY = 0.2  # seconds; long enough to observe, short enough for the suite


def pinned(n=1024, value=1.0):
    return torch.full((n,), value).pin_memory()


def test_create_by_device_string_and_index():
    s = torch.Stream(device="flagos")
    assert s.device == torch.device("flagos", F.current_device())
    s2 = F.Stream()
    assert isinstance(s2, torch.Stream) and s2.device.type == "flagos"
    assert s2.stream_id != 0  # pool streams, never the default stream


@pytest.mark.two_devices
def test_create_on_the_second_device():
    for s in (torch.Stream(device="flagos:1"), F.Stream(1), F.Stream("flagos:1")):
        assert s.device_index == 1
    assert F.current_stream(1).device_index == 1


def test_rebuild_from_the_id_triple():
    s = F.Stream()
    same = torch.Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)
    assert same == s
    assert F.Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type) == s


def test_priority_pools_are_distinct():
    low = torch.Stream(device="flagos", priority=0)
    high = torch.Stream(device="flagos", priority=-1)
    assert low.stream_id != high.stream_id
    assert high != F.default_stream()


def test_default_stream_is_current_until_changed():
    assert F.current_stream() == F.default_stream()
    assert torch.accelerator.current_stream() == F.default_stream()
    assert F.default_stream().stream_id == 0


def test_stream_context_sets_and_restores_the_current_stream():
    s = F.Stream()
    before = torch.accelerator.current_stream()
    with s:
        assert torch.accelerator.current_stream() == s
    assert torch.accelerator.current_stream() == before
    with F.stream(s):
        assert F.current_stream() == s
        assert torch.accelerator.current_stream() == s
    assert F.current_stream() == before
    with F.stream(None):  # a no-op, as in torch.cuda
        assert F.current_stream() == before


@pytest.mark.two_devices
def test_stream_context_on_the_other_device():
    start = F.current_device()
    other = 1 - start
    s = F.Stream(other)
    prev_other = F.current_stream(other)
    with F.stream(s):
        assert F.current_device() == other
        assert F.current_stream() == s
        assert torch.zeros(1, device="flagos").device.index == other
    assert F.current_device() == start
    assert F.current_stream(other) == prev_other


def test_set_stream_switches_until_restored():
    s = F.Stream()
    before = torch.accelerator.current_stream()
    try:
        torch.accelerator.set_stream(s)
        assert F.current_stream() == s
        F.set_stream(before)
        assert F.current_stream() == before
        F.set_stream(s)
        assert torch.accelerator.current_stream() == s
    finally:
        torch.accelerator.set_stream(before)


def test_current_stream_is_per_thread():
    s = F.Stream()
    seen = {}

    def worker():
        seen["initial"] = F.current_stream()
        torch.accelerator.set_stream(s)
        seen["set"] = F.current_stream()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"initial": F.default_stream(), "set": s}
    assert F.current_stream() == F.default_stream()


def test_repr_names_device_and_id():
    s = F.Stream()
    assert f"stream_id={s.stream_id}" in repr(s)
    assert "flagos" in repr(s)


def test_idle_stream_is_ready():
    s = F.Stream()
    s.synchronize()
    assert s.query()


def test_query_and_synchronize_follow_pending_work(delay):
    s = F.Stream()
    delay(s, DELAY)
    assert not s.query()
    start = time.perf_counter()
    s.synchronize()
    assert time.perf_counter() - start > DELAY / 2
    assert s.query()


def test_work_issued_in_a_stream_context_runs_on_that_stream(delay):
    s = F.Stream()
    dst = torch.empty(1024, device="flagos")
    src = pinned(value=3.0)
    delay(s, DELAY)
    with F.stream(s):
        dst.copy_(src, non_blocking=True)
    assert not s.query()  # the copy is queued behind the delay on s ...
    assert F.default_stream().query()  # ... and not on the default stream
    s.synchronize()
    assert dst.cpu().eq(3.0).all()


def test_wait_stream_orders_two_streams(delay):
    producer, consumer = F.Stream(), F.Stream()
    buf = torch.zeros(1024, device="flagos")
    delay(producer, DELAY)
    with F.stream(producer):
        buf.copy_(pinned(value=1.0), non_blocking=True)
    consumer.wait_stream(producer)
    assert not consumer.query()
    out = torch.empty(1024).pin_memory()
    with F.stream(consumer):
        out.copy_(buf, non_blocking=True)  # must see the producer's write
    consumer.synchronize()
    assert out.eq(1.0).all()


def test_wait_event_blocks_a_stream(delay):
    s1, s2 = F.Stream(), F.Stream()
    delay(s1, DELAY)
    e = s1.record_event()
    s2.wait_event(e)
    assert not s2.query()
    s2.synchronize()
    # s2 could only finish after the event, i.e. after s1's delayed work. (The
    # host plugin retires s1's queue entry just after signalling the event, so
    # s1.query() may lag by microseconds: wait for it rather than race it.)
    assert e.query()
    s1.synchronize()
    assert s1.query()


def test_device_synchronize_waits_for_every_stream(delay):
    streams = [F.Stream() for _ in range(3)]
    for s in streams:
        delay(s, DELAY)
    start = time.perf_counter()
    F.synchronize()
    assert time.perf_counter() - start > DELAY / 2
    assert all(s.query() for s in streams)


def test_accelerator_synchronize_waits_too(delay):
    s = F.Stream()
    delay(s, DELAY)
    torch.accelerator.synchronize()
    assert s.query()


@pytest.mark.two_devices
def test_streams_of_two_devices_are_independent(delay):
    s0, s1 = F.Stream(0), F.Stream(1)
    delay(s0, DELAY)
    assert s1.query()
    F.synchronize(1)  # device 1 has nothing pending
    assert not s0.query()
    F.synchronize(0)
    assert s0.query()


def test_record_stream_defers_block_reuse(delay):
    active = lambda: F.memory_stats()["active_bytes.all.current"]
    s = F.Stream()
    x = torch.empty(1 << 18, device="flagos")  # 1 MiB
    ptr = x.data_ptr()
    with_x = active()
    delay(s, DELAY)
    x.record_stream(s)
    del x
    assert active() == with_x  # freed by Python, still in use by s ...
    y = torch.empty(1 << 18, device="flagos")
    assert y.data_ptr() != ptr  # ... so never handed out meanwhile
    del y
    s.synchronize()
    torch.empty(1, device="flagos")  # the allocator collects completed frees when it next runs
    assert active() == with_x - (1 << 20)


@pytest.mark.two_devices
def test_record_stream_of_another_device_is_an_error():
    x = torch.empty(16, device="flagos:0")
    with pytest.raises(RuntimeError, match=r"\[flagos\] record_stream"):
        x.record_stream(F.Stream(1))


def test_ops_see_writes_still_queued_on_the_stream(delay):
    x = torch.zeros(4096, device="flagos")
    delay(F.current_stream(), DELAY)
    x.copy_(pinned(4096, 5.0), non_blocking=True)  # lands after the delay
    x.add_(1)  # in place: must read the 5s
    y = x * 2  # functional: must read the 6s
    assert x.cpu().eq(6.0).all()
    assert y.cpu().eq(12.0).all()


@pytest.mark.two_devices
def test_cross_device_copy_waits_for_the_source_stream(delay):
    s = F.Stream(0)
    x = torch.zeros(4096, device="flagos:0")
    delay(s, DELAY)
    with F.stream(s):
        x.copy_(pinned(4096, 3.0), non_blocking=True)
        y = x.to("flagos:1")
    assert y.cpu().eq(3.0).all()


@pytest.mark.two_devices
def test_cross_device_copy_source_is_not_overwritten_early(delay):
    src = torch.full((4096,), 1.0, device="flagos:0")
    dst = torch.empty(4096, device="flagos:1")
    delay(F.current_stream(1), DELAY)
    dst.copy_(src)  # queued on device 1 behind the delay
    src.fill_(2.0)  # device 0's stream waits for that copy first
    assert dst.cpu().eq(1.0).all()
    assert src.cpu().eq(2.0).all()
