"""How a command ends: its exit code, and the document of one that could not do its job.

Exit codes: 0 all good; 1 a check failed, or an anomaly was found; 2 usage or loading error;
3 a bug of gradcli itself; 5 gradcli check selected no case (pytest's "no tests ran"); 130
interrupted (Ctrl-C), as a shell reports SIGINT. `UsageError` is a command line that cannot be
carried out, from wherever it is found out (a bad value, an unwritable output, a missing extra).

With `--json` (or `--format json`) every ending gives stdout exactly one document: a usage
error (an unknown option, a missing argument, a bad value), a file that cannot be loaded, an
unavailable device, an interrupt, a bug of gradcli. Those that stop the command before it has
its own document give this one, with the exit code the process ends with.

JSON schema (schema id "gradcli.error/1")::

    {
      "schema": "gradcli.error/1",
      "version": str,                          # gradcli version
      "error": {
        "code": 2 | 3 | 130,                   # the exit code
        "kind": "usage" | "load" | "internal" | "interrupted",
        "message": str,
        "file": str | null,                    # the user's file at fault, when one is
        "line": int | null                     # its line, when known
      }
    }
"""

from __future__ import annotations

SCHEMA = "gradcli.error/1"

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL, EXIT_NO_CASES, EXIT_INTERRUPTED = 0, 1, 2, 3, 5, 130


class UsageError(Exception):
    """A command line that cannot be carried out (a bad value, an unavailable device): exit 2."""


def error_document(
    code: int, kind: str, message: str, file: str | None = None, line: int | None = None
) -> str:
    """The error document, as text (one line)."""
    import json  # only when there is an error to write: --version and --help stay light

    from ..version import __version__

    error = {"code": code, "kind": kind, "message": message, "file": file, "line": line}
    return json.dumps({"schema": SCHEMA, "version": __version__, "error": error})
