"""The progress bar of `gradcli check`: cases done of the total, and the time remaining.

Inside a case the bar moves with the checker's numerical Jacobian loop (`check_gradients`'
`progress(done, total)`, one call per perturbed input element), so one slow case shows its
time remaining too.

Only on a terminal and not with --json, and only once the run has taken PROGRESS_DELAY
seconds, so quick runs print nothing extra; transient, so it leaves no trace in the report.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich.progress only when a bar is drawn (a terminal): start-up off one
    from rich.console import Console
    from rich.table import Column

#: Seconds a run takes before its bar appears.
PROGRESS_DELAY = 1.0


class CheckProgress:
    """One bar for a run: `with bar.case("checking f.py::x") as step: ...` per case, in order."""

    def __init__(self, console: Console, total: int, delay: float) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.table import Column

        self._lock = threading.Lock()
        self._done = False
        self._bar = Progress(
            SpinnerColumn(),
            # the name gives way first (cut with an ellipsis), then the bar; the numbers never
            TextColumn("{task.description}", style="bold", table_column=_shrinking(ratio=3)),
            BarColumn(bar_width=None, table_column=_shrinking(ratio=1)),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TimeElapsedColumn(table_column=Column(no_wrap=True)),
            TextColumn("left", table_column=Column(no_wrap=True)),
            TimeRemainingColumn(table_column=Column(no_wrap=True)),
            console=console,
            transient=True,
            expand=True,
        )
        self._task = self._bar.add_task("checking", total=total)
        self._cases_done = 0
        self._timer = threading.Timer(delay, self._start)
        self._timer.daemon = True

    def add(self, count: int) -> None:
        """`count` more cases to run (files are loaded one at a time, so the total grows)."""
        self._bar.update(self._task, total=self._bar.tasks[0].total + count, refresh=True)

    @contextmanager
    def case(self, description: str) -> Iterator[Callable[[int, int], None]]:
        """Yields `step(done, total)`: the case's share of the bar, as a fraction done."""
        self._bar.update(self._task, description=description)
        start = self._cases_done
        reached = 0.0

        def step(done: int, total: int) -> None:
            nonlocal reached  # monotonic: at order 2 the second check counts again from 0
            reached = max(reached, min(done / total, 1.0) if total else 1.0)
            self._bar.update(self._task, completed=start + reached)

        try:
            yield step
        finally:
            self._cases_done += 1
            self._bar.update(self._task, completed=self._cases_done)

    def _start(self) -> None:
        with self._lock:
            if not self._done:
                self._bar.start()

    def __enter__(self) -> CheckProgress:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            self._bar.stop()


def _shrinking(ratio: int) -> Column:
    from rich.table import Column

    return Column(ratio=ratio, no_wrap=True, overflow="ellipsis", min_width=4)


class _NoProgress:
    """Off a terminal, or with --json: nothing drawn."""

    def add(self, count: int) -> None:
        pass

    @contextmanager
    def case(self, description: str) -> Iterator[None]:
        yield None  # no step: the checker counts nothing


@contextmanager
def check_progress(
    console: Console, total: int, *, enabled: bool = True, delay: float | None = None
) -> Iterator[CheckProgress | _NoProgress]:
    """The run's bar on `console` (stderr) when it is a terminal and `enabled`, else a stand-in."""
    if not (enabled and console.is_terminal):
        yield _NoProgress()
        return
    with CheckProgress(console, total, PROGRESS_DELAY if delay is None else delay) as bar:
        yield bar
