"""The one place where the way a command ended becomes its exit code (`gradcli.render.error`
lists them): a bug of gradcli itself is one line, the traceback with --debug, as pytest does."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from typer import Exit

from ..program.exception_text import exception_text
from ..program.running import Interrupted, LoadError
from ..render.error import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, UsageError, error_document

if TYPE_CHECKING:
    from rich.console import Console


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
        from ..check.render.report import print_errors  # rich's tables: only when there is an error to draw

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
