"""Exit codes, and the one place where the way a command ended becomes one.

0: all good; 1: a check failed, or an anomaly was found; 2: usage or loading error;
3: a bug of gradcli itself (one line, the traceback with --debug, as pytest does);
5: gradcli check selected no case (no check file found, or -k left none), pytest's "no tests ran";
130: interrupted (Ctrl-C), as a shell reports SIGINT.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from typer import Exit

from .exception_text import exception_text
from .running import Interrupted, LoadError

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL, EXIT_NO_CASES, EXIT_INTERRUPTED = 0, 1, 2, 3, 5, 130


class UsageError(Exception):
    """A command line that cannot be carried out (a bad value, an unavailable device): exit 2."""


@contextmanager
def exit_codes(
    err: Console, debug: bool, usage: tuple[type[Exception], ...] = (), document: TextIO | None = None
) -> Iterator[None]:
    """Turn what the block raises into an exit code, saying why on `err` (and, as the error
    document, on `document`: the stream a --json document goes to).

    UsageError (and the `usage` types) -> 2 with "error: ..."; LoadError -> 2 with the file and
    line; KeyboardInterrupt -> 130 ("interrupted while running FILE::CASE"); BrokenPipeError
    (stdout's reader went away) passes through to `stdout_guard`; any other exception is a bug
    of gradcli -> 3. Exit, the command's own exit code, passes through.
    """

    def ended(code: int, kind: str, message: str, file: str | None = None, line: int | None = None):
        if document is not None:
            from .render.error import error_document  # json: only when there is an error to write

            document.write(error_document(code, kind, message, file, line) + "\n")
        return Exit(code)

    try:
        yield
    except (Exit, BrokenPipeError):
        raise
    except (UsageError, *usage) as exc:
        err.print(f"error: {exc}", soft_wrap=True)
        raise ended(EXIT_USAGE, "usage", str(exc)) from None
    except LoadError as exc:
        from .render.check import print_errors  # rich's tables: only when there is an error to draw

        print_errors(err, [exc], debug)
        raise ended(EXIT_USAGE, "load", exc.message, exc.file, exc.line) from None
    except Interrupted as exc:
        err.print(f"interrupted {exc.where}", soft_wrap=True, highlight=False)
        raise ended(EXIT_INTERRUPTED, "interrupted", f"interrupted {exc.where}") from None
    except KeyboardInterrupt:
        err.print("interrupted", soft_wrap=True)
        raise ended(EXIT_INTERRUPTED, "interrupted", "interrupted") from None
    except Exception as exc:
        if debug:
            err.print(traceback.format_exc().rstrip(), soft_wrap=True)
        message = f"internal error: {exception_text(exc)}"
        err.print(f"{message} (run with --debug for the traceback)", soft_wrap=True)
        raise ended(EXIT_INTERNAL, "internal", message) from None
