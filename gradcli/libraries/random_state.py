"""The random generators' states, taken and put back, so a forward run again draws what it drew.

A failure's replays (check.replay.failure_replay) compare the outputs of runs that differ in one
nudged value; dropout or noise drawn afresh each run would change the outputs by itself. Covered:
each library's generators (`Library.random_state`), numpy's global one, Python's.
"""

from __future__ import annotations

from collections.abc import Callable


def take_random_state() -> Callable[[], None]:
    """The generators' states now, as a function that puts them back."""
    from . import LIBRARIES

    restores = [_globals(), *(library.random_state() for library in LIBRARIES)]
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
