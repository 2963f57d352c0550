"""Events: creation and ids, record/query/synchronize, elapsed_time (and its
errors), waits across streams and devices, reuse. torch.Event and
torch.flagos.Event are the same objects on the flagos device."""

import time

import pytest
import torch

F = torch.flagos
DELAY = 0.2


def test_new_event_is_unrecorded():
    e = torch.Event(device="flagos")
    assert e.event_id == 0
    assert e.device.type == "flagos"
    assert e.query()  # nothing recorded: complete by definition
    e.synchronize()


def test_record_gives_distinct_ids():
    a, b = torch.Event(device="flagos"), torch.Event(device="flagos")
    a.record()
    b.record()
    assert a.event_id != 0 and b.event_id != 0 and a.event_id != b.event_id
    assert a.device == torch.device("flagos", F.current_device())


def test_flagos_event_is_a_torch_event():
    e = F.Event(enable_timing=True)
    assert isinstance(e, torch.Event) and isinstance(e, F.Event)
    assert not isinstance(torch.Event(device="cpu"), F.Event)
    e.record()
    e.synchronize()
    assert e.query()


def test_interprocess_events_are_refused():
    with pytest.raises(RuntimeError, match=r"\[flagos\] interprocess events"):
        F.Event(interprocess=True)


def test_stream_record_event():
    s = F.Stream()
    e = s.record_event()
    assert isinstance(e, torch.Event) and e.event_id != 0
    e.synchronize()
    assert e.query()


def test_query_and_synchronize_follow_the_stream(delay):
    s = F.Stream()
    delay(s, DELAY)
    e = torch.Event(device="flagos")
    e.record(s)
    assert not e.query()
    start = time.perf_counter()
    e.synchronize()
    assert time.perf_counter() - start > DELAY / 2
    assert e.query()


def test_elapsed_time_is_positive():
    start, end = torch.Event(device="flagos", enable_timing=True), torch.Event(device="flagos", enable_timing=True)
    start.record()
    x = torch.randn(128, 128, device="flagos")
    (x @ x).sum().item()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0


def test_elapsed_time_measures_a_delay(delay):
    s = F.Stream()
    start, end = F.Event(enable_timing=True), F.Event(enable_timing=True)
    start.record(s)
    delay(s, DELAY)
    end.record(s)
    end.synchronize()  # torch measures completed events only
    ms = start.elapsed_time(end)
    assert ms >= DELAY * 1000 * 0.9


def test_elapsed_time_needs_timing_on_both():
    a, b = torch.Event(device="flagos"), torch.Event(device="flagos", enable_timing=True)
    a.record()
    b.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        a.elapsed_time(b)
    with pytest.raises(ValueError, match="enable_timing=True"):
        b.elapsed_time(a)


def test_elapsed_time_needs_both_recorded():
    a, b = F.Event(enable_timing=True), F.Event(enable_timing=True)
    a.record()
    with pytest.raises(ValueError, match="recorded"):
        a.elapsed_time(b)


def test_wait_orders_another_stream(delay):
    s1, s2 = F.Stream(), F.Stream()
    buf = torch.zeros(512, device="flagos")
    delay(s1, DELAY)
    with F.stream(s1):
        buf.copy_(torch.full((512,), 9.0).pin_memory(), non_blocking=True)
    e = torch.Event(device="flagos")
    e.record(s1)
    e.wait(s2)
    assert not s2.query()
    out = torch.empty(512).pin_memory()
    with F.stream(s2):
        out.copy_(buf, non_blocking=True)
    s2.synchronize()
    assert out.eq(9.0).all()


def test_several_streams_wait_on_one_event(delay):
    src = F.Stream()
    delay(src, DELAY)
    e = src.record_event()
    waiters = [F.Stream() for _ in range(3)]
    for w in waiters:
        w.wait_event(e)
    assert not any(w.query() for w in waiters)
    e.synchronize()
    for w in waiters:
        w.synchronize()
        assert w.query()


def test_rerecording_moves_the_event(delay):
    s = F.Stream()
    e = torch.Event(device="flagos")
    e.record(s)
    e.synchronize()
    first = e.event_id
    delay(s, DELAY)
    e.record(s)
    assert e.event_id == first  # same event object, new marker
    assert not e.query()
    e.synchronize()
    assert e.query()


@pytest.mark.two_devices
def test_event_on_the_second_device(delay):
    s1 = F.Stream(1)
    e = torch.Event(device="flagos:1", enable_timing=True)
    e.record(s1)
    assert e.device == torch.device("flagos", 1)
    e.synchronize()
    assert e.query()


@pytest.mark.two_devices
def test_cross_device_wait(delay):
    s0, s1 = F.Stream(0), F.Stream(1)
    delay(s0, DELAY)
    e = s0.record_event()
    s1.wait_event(e)
    assert not s1.query()
    s1.synchronize()
    assert e.query()


@pytest.mark.two_devices
def test_recording_on_a_stream_of_another_device_is_an_error():
    e = torch.Event(device="flagos:0")
    e.record(F.Stream(0))
    with pytest.raises(RuntimeError, match="does not match"):
        e.record(F.Stream(1))
