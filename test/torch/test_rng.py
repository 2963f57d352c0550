"""Random number generation on flagos: per-device default generators,
seeding (torch.flagos.* and torch.manual_seed), RNG state save/restore,
explicit torch.Generator(device="flagos"), fork_rng. Every test that seeds
runs under `rng_restored`, so the rest of the process sees its old state."""

import pytest
import torch

F = torch.flagos

pytestmark = pytest.mark.usefixtures("rng_restored")


def draw(device="flagos", generator=None, n=8):
    return torch.randn(n, device=device, generator=generator).cpu()


def test_manual_seed_reproduces_draws():
    F.manual_seed(1234)
    a = draw()
    F.manual_seed(1234)
    assert torch.equal(draw(), a)
    F.manual_seed(4321)
    assert not torch.equal(draw(), a)


def test_initial_seed_reports_the_seed():
    F.manual_seed(77)
    assert F.initial_seed() == 77
    F.seed()
    first = F.initial_seed()
    F.seed()
    assert F.initial_seed() != first  # non-deterministic reseed


def test_torch_manual_seed_reaches_flagos():
    torch.manual_seed(99)
    a = draw()
    torch.manual_seed(99)
    assert torch.equal(draw(), a)
    assert all(F.default_generators[i].initial_seed() == 99 for i in range(F.device_count()))


@pytest.mark.two_devices
def test_manual_seed_only_seeds_the_current_device():
    F.manual_seed_all(5)
    with F.device(0):
        F.manual_seed(6)
    assert F.default_generators[0].initial_seed() == 6
    assert F.default_generators[1].initial_seed() == 5


@pytest.mark.two_devices
def test_devices_have_separate_generators():
    F.manual_seed_all(11)
    a0 = draw("flagos:0")
    a1 = draw("flagos:1")
    assert torch.equal(a0, a1)  # same seed, same sequence ...
    b0 = draw("flagos:0")
    F.manual_seed_all(11)
    assert torch.equal(draw("flagos:1"), a1)  # ... but device 0's draws did not advance device 1
    assert not torch.equal(b0, a0)


def test_seed_all_gives_every_device_one_seed():
    F.seed_all()
    seeds = {F.default_generators[i].initial_seed() for i in range(F.device_count())}
    assert len(seeds) == 1


def test_rng_state_round_trip():
    F.manual_seed(3)
    state = F.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    a = draw()
    F.set_rng_state(state)
    assert torch.equal(draw(), a)


def test_rng_state_all_round_trip():
    states = F.get_rng_state_all()
    assert len(states) == F.device_count()
    draws = [draw(f"flagos:{i}") for i in range(F.device_count())]
    F.set_rng_state_all(states)
    for i, expected in enumerate(draws):
        assert torch.equal(draw(f"flagos:{i}"), expected)


@pytest.mark.two_devices
def test_rng_state_by_device():
    state1 = F.get_rng_state("flagos:1")
    a = draw("flagos:1")
    F.set_rng_state(state1, 1)
    assert torch.equal(draw("flagos:1"), a)


def test_explicit_generator():
    g = torch.Generator(device="flagos")
    assert g.device.type == "flagos"
    g.manual_seed(42)
    a = draw(generator=g)
    g.manual_seed(42)
    assert torch.equal(draw(generator=g), a)
    assert g.initial_seed() == 42
    state = g.get_state()
    b = draw(generator=g)
    g.set_state(state)
    assert torch.equal(draw(generator=g), b)


@pytest.mark.two_devices
def test_generator_on_the_second_device():
    g = torch.Generator(device="flagos:1")
    assert g.device == torch.device("flagos", 1)
    g.manual_seed(8)
    x = torch.rand(4, device="flagos:1", generator=g)
    assert x.device.index == 1


def test_explicit_generator_leaves_the_default_alone():
    F.manual_seed(10)
    a = draw()
    F.manual_seed(10)
    draw(generator=torch.Generator(device="flagos").manual_seed(1))
    assert torch.equal(draw(), a)


@pytest.mark.parametrize("sample", [
    lambda g: torch.rand(16, device="flagos", generator=g),
    lambda g: torch.randint(0, 100, (16,), device="flagos", generator=g),
    lambda g: torch.empty(16, device="flagos").normal_(generator=g),
    lambda g: torch.empty(16, device="flagos").uniform_(generator=g),
    lambda g: torch.bernoulli(torch.full((16,), 0.5, device="flagos"), generator=g),
    lambda g: torch.multinomial(torch.ones(10, device="flagos"), 5, generator=g),
    lambda g: torch.randperm(16, device="flagos", generator=g),
], ids=["rand", "randint", "normal_", "uniform_", "bernoulli", "multinomial", "randperm"])
def test_random_ops_follow_the_generator(sample):
    g = torch.Generator(device="flagos")
    a = sample(g.manual_seed(2024)).cpu()
    b = sample(g.manual_seed(2024)).cpu()
    assert torch.equal(a, b)


def test_dropout_follows_the_default_generator():
    x = torch.ones(256, device="flagos")
    F.manual_seed(1)
    a = torch.nn.functional.dropout(x, 0.5).cpu()
    F.manual_seed(1)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5).cpu(), a)
    assert 0 < (a == 0).sum() < 256


def test_fork_rng_restores_flagos_state():
    F.manual_seed(21)
    with torch.random.fork_rng(devices=range(F.device_count()), device_type="flagos"):
        draw()
        draw()
    F.manual_seed(21)
    expected = draw()
    F.manual_seed(21)
    with torch.random.fork_rng(devices=range(F.device_count()), device_type="flagos"):
        draw()
    assert torch.equal(draw(), expected)


@pytest.mark.host_plugin
def test_generator_offset_is_unsupported_on_a_cpu_engine():
    g = torch.Generator(device="flagos")  # draws from a CPU Mersenne Twister on the host plugin
    with pytest.raises(RuntimeError, match=r"\[flagos\] the flagos generator of flagos:0 has no offset"):
        g.get_offset()
    with pytest.raises(RuntimeError, match=r"\[flagos\] .* has no offset"):
        g.set_offset(1)


def test_default_generators_are_indexed_by_device():
    assert len(F.default_generators) == F.device_count()
    assert F.default_generators[0].device == torch.device("flagos", 0)
    with pytest.raises(IndexError, match=r"\[flagos\]"):
        F.default_generators[F.device_count()]


def test_seeding_before_first_use_applies_at_initialisation(run_flagos):
    out = run_flagos("""
        torch.manual_seed(123)  # the common program start: flagos not initialised yet
        assert not torch.flagos.is_initialized()
        a = torch.randn(6, device="flagos").cpu()
        torch.flagos.manual_seed(123)
        b = torch.randn(6, device="flagos").cpu()
        print(torch.equal(a, b), torch.flagos.initial_seed())
    """)
    assert out.split() == ["True", "123"]
