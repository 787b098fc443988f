"""How gradcli shows an exception raised by user code, even one that cannot be printed.

A user's `__str__` may raise or return a non-string; gradcli then shows
`<unprintable X object>` (what Python's traceback printed up to 3.10), never its own crash.
"""

from __future__ import annotations

#: What user code may raise that gradcli reports as that code's failure: `sys.exit()` in a
#: case is the user's bug too. KeyboardInterrupt alone stops the run. (The engine's checker
#: has the same tuple, `gradcheck.report.USER_ERRORS`: the engine never imports gradcli.)
USER_ERRORS = (Exception, SystemExit, GeneratorExit)


def message_of(exc: BaseException) -> str:
    """`str(exc)`, or `<unprintable X object>` when the exception's own `__str__` fails."""
    try:
        text = str(exc)
    except Exception:  # __str__ raised, or returned a non-string (TypeError)
        return f"<unprintable {type(exc).__name__} object>"
    return text


def exception_text(exc: BaseException) -> str:
    """ "Type: message" as a traceback's last line shows it ("Type" alone for an empty message)."""
    text = message_of(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
