"""Grad-mode context managers as decorators, as torch 2.13's `_DecoratorContextManager` behaves.

Every scenario runs on the engine and, where torch is installed, on torch too with the same
assertions (the `lib` fixture, tests/conftest.py), so the two are checked against one expectation.
"""

import warnings

import pytest

CLASS_WARNING = (
    "Decorating classes is deprecated and will be disabled in future versions. You should only decorate "
    "functions or methods. To preserve the current behavior of class decoration, you can directly "
    "decorate the `__init__` method and nothing else."
)


@pytest.mark.parametrize(
    "decorator, inside",
    [
        (lambda lib: lib.no_grad(), False),
        (lambda lib: lib.enable_grad(), True),
        (lambda lib: lib.set_grad_enabled(False), False),
        (lambda lib: lib.set_grad_enabled(True), True),
    ],
    ids=["no_grad", "enable_grad", "set_grad_enabled-False", "set_grad_enabled-True"],
)
def test_generator_body_runs_in_the_mode_and_the_caller_does_not(lib, decorator, inside):
    seen = []

    @decorator(lib)
    def numbers(n):
        for i in range(n):
            seen.append(lib.is_grad_enabled())
            reply = yield i
            seen.append((reply, lib.is_grad_enabled()))
        return "done"

    with lib.set_grad_enabled(not inside):
        gen = numbers(2)
        assert next(gen) == 0
        assert lib.is_grad_enabled() is not inside
        assert gen.send("a") == 1
        assert lib.is_grad_enabled() is not inside
        with pytest.raises(StopIteration) as stop:
            gen.send("b")
        assert stop.value.value == "done"
        assert lib.is_grad_enabled() is not inside
    assert seen == [inside, ("a", inside), inside, ("b", inside)]


def test_generator_throw_and_close_run_inside_the_mode(lib):
    seen = []

    @lib.no_grad()
    def guarded():
        try:
            yield 1
        except ValueError:
            seen.append(("except", lib.is_grad_enabled()))
            yield 2
        finally:
            seen.append(("finally", lib.is_grad_enabled()))

    gen = guarded()
    next(gen)
    assert gen.throw(ValueError()) == 2
    assert lib.is_grad_enabled()
    gen.close()
    assert lib.is_grad_enabled()
    assert seen == [("except", False), ("finally", False)]


def test_generator_exception_reaches_the_caller_with_its_mode_restored(lib):
    @lib.no_grad()
    def failing():
        yield 1
        raise KeyError("boom")

    gen = failing()
    next(gen)
    with pytest.raises(KeyError):
        next(gen)
    assert lib.is_grad_enabled()


def test_recursive_generators_keep_each_level_in_its_own_mode(lib):
    @lib.enable_grad()
    def outer(depth):
        yield lib.is_grad_enabled()
        if depth:
            with lib.no_grad():
                yield from inner(depth - 1)
            yield lib.is_grad_enabled()

    @lib.no_grad()
    def inner(depth):
        yield lib.is_grad_enabled()
        yield from outer(depth)

    with lib.no_grad():
        assert list(outer(2)) == [True, False, True, False, True, True, True]
        assert not lib.is_grad_enabled()


def test_bare_decorators_without_parentheses(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.enable_grad
    def doubled(t):
        return t * 2

    @lib.no_grad
    def tripled(t):
        return t * 3

    with lib.no_grad():
        assert doubled(x).requires_grad
    assert not tripled(x).requires_grad
    assert doubled.__name__ == "doubled" and tripled.__name__ == "tripled"


def test_decorating_a_class_warns_and_runs_the_constructor_in_the_mode(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @lib.no_grad()
        class Probe:
            def __init__(self):
                self.grad_enabled = lib.is_grad_enabled()

    assert [(w.category, str(w.message)) for w in caught] == [(FutureWarning, CLASS_WARNING)]
    assert caught[0].filename == __file__  # stacklevel points at the decorated class
    assert Probe.__name__ == "<lambda>"
    assert Probe().grad_enabled is False
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("value", [1, 0, None, "yes", 1.0])
def test_set_grad_enabled_takes_only_a_bool(lib, value):
    expected = f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(value).__name__}"
    with pytest.raises(TypeError) as err:
        lib.set_grad_enabled(value)
    assert str(err.value) == expected
    assert lib.is_grad_enabled()


def test_bare_set_grad_enabled_decorator_is_refused(lib):
    with pytest.raises(TypeError) as err:

        @lib.set_grad_enabled
        def f():
            pass

    assert str(err.value) == "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not function"


def test_set_grad_enabled_repr(lib):
    mode = lib.set_grad_enabled(False)
    assert repr(mode) == f"{lib.__name__}.autograd.grad_mode.set_grad_enabled(mode=False)"
    assert str(mode) == repr(mode)


def test_set_grad_enabled_decorator_enters_a_fresh_copy_per_call(lib):
    @lib.set_grad_enabled(False)
    def depth_first(n):
        with lib.enable_grad():
            inner = depth_first(n - 1) if n else []
        return [lib.is_grad_enabled(), *inner]

    assert depth_first(2) == [False, False, False]
    assert lib.is_grad_enabled()


def test_one_no_grad_instance_remembers_one_previous_mode(lib):
    """torch's quirk: a reused instance's inner enter overwrites what the outer exit restores."""
    mode = lib.no_grad()
    with mode:
        with mode:
            pass
        assert not lib.is_grad_enabled()
    assert not lib.is_grad_enabled()


def test_async_function_body_is_not_put_in_the_mode(lib):
    """torch wraps a coroutine function like any function: the call only makes the coroutine."""
    import asyncio

    @lib.no_grad()
    async def body():
        return lib.is_grad_enabled()

    assert asyncio.run(body()) is True
