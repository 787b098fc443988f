"""Grad mode: whether ops record the graph. Context managers that double as decorators.

As torch's (`torch/autograd/grad_mode.py` on `torch.utils._contextlib`): each call of a
decorated function enters a fresh copy of the context (`clone`), so recursion and reentrancy
restore the right mode; a decorated generator function gets the mode inside its body at
every resumption (send, throw, close) and the caller's mode back at every yield.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable

import numpy

from .thread_local import this_thread

CLASS_DECORATION_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only decorate "
    "functions or methods. To preserve the current behavior of class decoration, you can directly "
    "decorate the `__init__` method and nothing else."
)


def is_grad_enabled() -> bool:
    """Grad mode on this thread (each thread has its own, as in torch)."""
    return this_thread.grad_enabled


def _set_enabled(mode) -> None:
    """torch._C._set_grad_enabled: a bool (Python's or numpy's) and nothing else."""
    if mode.__class__ is not bool and not isinstance(mode, numpy.bool_):
        raise TypeError(
            f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}"
        )
    this_thread.grad_enabled = bool(mode)


def _in_context(make_context: Callable, fn: Callable) -> Callable:
    """`fn` run inside a fresh context from `make_context` at each call."""
    if inspect.isgeneratorfunction(fn):
        return _generator_in_context(make_context, fn)

    @functools.wraps(fn)
    def run_in_context(*args, **kwargs):
        with make_context():
            return fn(*args, **kwargs)

    return run_in_context


def _generator_in_context(make_context: Callable, generator_function: Callable) -> Callable:
    """A generator function whose body runs in the context and whose caller does not.

    Each resumption of the inner generator (the first `send(None)`, later sends, a throw
    from the caller, close) happens inside a fresh context; the values it yields pass
    through to the caller outside it.
    """

    @functools.wraps(generator_function)
    def generator_in_context(*args, **kwargs):
        inner = generator_function(*args, **kwargs)
        resume, value = inner.send, None
        while True:
            try:
                with make_context():
                    response = resume(value)
            except StopIteration as stop:
                return stop.value
            try:
                value = yield response
                resume = inner.send
            except GeneratorExit:
                with make_context():
                    inner.close()
                raise
            except BaseException as thrown:  # the caller's throw() goes on into the body
                resume, value = inner.throw, thrown

    return generator_in_context


class _DecoratorContextManager:
    """A grad-mode context manager that also decorates functions (and, deprecated, classes)."""

    def __call__(self, fn: Callable) -> Callable:
        if inspect.isclass(fn):
            warnings.warn(CLASS_DECORATION_WARNING, FutureWarning, stacklevel=2)
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)  # torch wraps a lambda too
        return _in_context(self.clone, fn)

    def clone(self):
        """A fresh context for one call of a decorated function."""
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: `@no_grad` is `@no_grad()`."""

    def __new__(cls, orig_func: Callable | None = None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class _FixedModeContext(_NoParamDecoratorContextManager):
    """Sets grad mode to the class's `mode` inside; as in torch, one instance remembers one previous mode."""

    mode = True

    def __enter__(self) -> None:
        self.prev = this_thread.grad_enabled
        this_thread.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        this_thread.grad_enabled = self.prev


class no_grad(_FixedModeContext):
    """Ops inside record no graph."""

    mode = False

    def __init__(self) -> None:
        self.prev = False


class enable_grad(_FixedModeContext):
    """Ops inside record the graph, even within no_grad."""

    mode = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode at construction (so it works as a plain call, like torch), restored on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = this_thread.grad_enabled
        self.mode = mode
        _set_enabled(mode)

    def __call__(self, fn: Callable) -> Callable:
        _set_enabled(self.prev)  # used as a decorator: construction must not change the mode
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _set_enabled(self.prev)

    def __str__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    __repr__ = __str__

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)
