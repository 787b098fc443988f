"""Grad mode: whether ops record the graph. Context managers that double as decorators."""

from __future__ import annotations

import functools

# One mutable cell read on every op: `state[0]` is cheaper than a function call.
state = [True]


def is_grad_enabled() -> bool:
    return state[0]


class _GradModeContext:
    """Base of no_grad / enable_grad / set_grad_enabled: nestable, reusable as decorators."""

    mode = True

    def __init__(self):
        self._saved: list[bool] = []

    def __enter__(self):
        self._saved.append(state[0])
        state[0] = self.mode
        return None

    def __exit__(self, *exc):
        state[0] = self._saved.pop()
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = state[0]
            state[0] = mode
            try:
                return fn(*args, **kwargs)
            finally:
                state[0] = prev

        return wrapper


class no_grad(_GradModeContext):
    mode = False

    def __new__(cls, fn=None):
        # `@no_grad` without parentheses decorates directly, as torch allows.
        self = super().__new__(cls)
        if fn is not None:
            self.__init__()
            return self(fn)
        return self

    def __init__(self, fn=None):
        super().__init__()


class enable_grad(_GradModeContext):
    mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode at construction (like torch), and restores it on exit."""

    def __init__(self, mode: bool):
        super().__init__()
        self.mode = bool(mode)
        self._prev = state[0]
        state[0] = self.mode

    def __enter__(self):
        self._saved.append(self._prev)
        state[0] = self.mode
        return None

    def __call__(self, fn):
        state[0] = self._prev  # used as a decorator: construction must not change the mode
        return super().__call__(fn)
