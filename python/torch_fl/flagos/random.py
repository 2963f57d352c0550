"""Random state of the flagos generators (one default generator per device).

Kernels that draw random numbers run from the flagos generator of their
device, so seeding here decides what ``torch.randn(..., device="flagos")``,
dropout and friends produce. ``torch.manual_seed`` reaches ``manual_seed_all``.
"""

from __future__ import annotations

from typing import Iterable, List, Union

import torch

from torch_fl import _C


class _DefaultGenerators:
    """``torch.flagos.default_generators[i]``: the device's torch.Generator."""

    def __getitem__(self, index: int) -> torch.Generator:
        from torch_fl import flagos

        flagos._lazy_init()
        if not 0 <= index < flagos.device_count():
            raise IndexError(f"[flagos] device index {index} is out of range")
        return _C._get_default_generator(index)

    def __len__(self) -> int:
        return _C._device_count()

    def __iter__(self):
        return (self[i] for i in range(len(self)))


default_generators = _DefaultGenerators()


def _index(device) -> int:
    from torch_fl import flagos

    return flagos._index(device)


def get_rng_state(device: Union[int, str, torch.device] = "flagos") -> torch.Tensor:
    return default_generators[_index(device)].get_state()


def get_rng_state_all() -> List[torch.Tensor]:
    return [g.get_state() for g in default_generators]


def set_rng_state(new_state: torch.Tensor, device: Union[int, str, torch.device] = "flagos") -> None:
    state = new_state.clone(memory_format=torch.contiguous_format)
    from torch_fl import flagos

    flagos._lazy_call(lambda: default_generators[_index(device)].set_state(state))


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator."""
    from torch_fl import flagos

    seed = int(seed)
    flagos._lazy_call(lambda: default_generators[flagos.current_device()].manual_seed(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every device's generator."""
    from torch_fl import flagos

    seed = int(seed)

    def run():
        for g in default_generators:
            g.manual_seed(seed)

    flagos._lazy_call(run)


def seed() -> None:
    """Seeds the current device's generator with a non-deterministic number."""
    from torch_fl import flagos

    flagos._lazy_call(lambda: default_generators[flagos.current_device()].seed())


def seed_all() -> None:
    """Seeds every generator with one non-deterministic number."""
    from torch_fl import flagos

    def run():
        value = default_generators[0].seed()
        for g in list(default_generators)[1:]:
            g.manual_seed(value)

    flagos._lazy_call(run)


def initial_seed() -> int:
    from torch_fl import flagos

    flagos._lazy_init()
    return default_generators[flagos.current_device()].initial_seed()
