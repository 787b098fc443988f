"""The random generators' states, taken and put back, so a forward run again draws what it drew.

A failure's replays (failure_replay.py) compare the outputs of runs that differ in one nudged
value; dropout or noise drawn afresh each run would change the outputs by itself. Covered: the
engine's generators, torch's (CPU, and CUDA once initialised), numpy's global one, Python's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def take() -> Callable[[], None]:
    """The generators' states now, as a function that puts them back."""
    restores = [_globals(), _engine(), _torch()]
    present = [restore for restore in restores if restore is not None]

    def restore() -> None:
        for put_back in present:
            put_back()

    return restore


def _globals() -> Callable[[], None]:
    """numpy's and Python's global generators, as the engine's checker saves them."""
    from engine.autograd.gradcheck.random_calls import global_random_state, set_global_random_state

    state = global_random_state()
    return lambda: set_global_random_state(state)


def _engine() -> Callable[[], None] | None:
    from engine import backend

    try:
        saved = backend.rng_snapshot()
    except Exception:  # a generator that cannot be copied (a GPU one): its draws are not replayed
        return None
    return lambda: backend.rng_restore(saved)


def _torch() -> Callable[[], None] | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    cpu = torch.random.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    def restore() -> None:
        torch.random.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)

    return restore
