"""`gradcli schema NAME`: the JSON Schema of a command's document, as shipped in `gradcli.schemas`."""

from typing import Annotated, Literal

import typer

from .options import examples
from .stdout_guard import command_stdout

EXAMPLES = examples("gradcli schema check", "gradcli schema graph > gradcli.graph.schema.json")


def schema(
    name: Annotated[
        Literal["check", "graph", "anomaly", "diff", "error"],
        typer.Argument(metavar="NAME", help="check, graph, anomaly, diff or error.", show_default=False),
    ],
) -> None:
    """Print the JSON Schema (draft 2020-12) of a command's --format json document (error: the
    document of a command that stopped with an error)."""
    from ..schemas import schema_text

    with command_stdout(False) as stdout:
        stdout.write(schema_text(name))
        stdout.flush()
