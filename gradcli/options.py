"""The command-line options the commands share, declared once (typer's `Annotated` form).

Each command gives the default in its signature (`device: DeviceOption = Device.cpu`), as
typer asks of `Annotated` options.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


DeviceOption = Annotated[Device, typer.Option("--device", help="Default device while the user's code runs.")]
SeedOption = Annotated[
    int,
    typer.Option(
        "--seed",
        help="manual_seed of engine (and of torch, once the file imports it) before running each file and building inputs.",
    ),
]
DebugOption = Annotated[bool, typer.Option("--debug", help="Show tracebacks.")]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Machine-readable results on stdout (one JSON document).")
]
