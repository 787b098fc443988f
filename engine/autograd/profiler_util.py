"""The profiler's results, as torch.autograd.profiler_util names them: `FunctionEvent` (one timed
call), `FunctionEventAvg` (calls of one name summed), `EventList` and its `table`, laid out as
torch's `_build_table` lays out the columns the engine measures. Times are microseconds."""

from __future__ import annotations

from collections.abc import Iterable


class FunctionEvent:
    """One timed call: an op's forward, a node's backward, or a `record_function` range."""

    count = 1

    def __init__(
        self, name: str, start_us: float, cpu_time_total: float, self_cpu_time_total: float, input_shapes
    ):
        self.name = self.key = name
        self.time_range_start = start_us
        self.cpu_time_total = cpu_time_total
        self.self_cpu_time_total = self_cpu_time_total
        self.input_shapes = input_shapes

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
            f"self_cpu_time={_format_time(self.self_cpu_time_total)} input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The calls of one key (a name, or a name and input shapes) summed."""

    def __init__(self, key: str, input_shapes):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event: FunctionEvent) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        """The average time per call."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
            f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>"
        )


class EventList(list):
    """A list of events with torch's summaries."""

    def key_averages(self, group_by_input_shapes: bool = False) -> EventList:
        """One FunctionEventAvg per name (per name and input shapes when grouping by them)."""
        stats: dict = {}
        for event in self:
            key = (event.key, str(event.input_shapes)) if group_by_input_shapes else event.key
            if key not in stats:
                stats[key] = FunctionEventAvg(event.key, event.input_shapes if group_by_input_shapes else "")
            stats[key].add(event)
        return EventList(stats.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", "")
        for event in self:
            total.add(event)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(event.self_cpu_time_total for event in self)

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
    ) -> str:
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls
        (and Input Shapes where recorded), sorted by the attribute `sort_by` names, largest first."""
        return _build_table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header)

    def __str__(self) -> str:
        return self.table()


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _build_table(
    events: Iterable, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header
) -> str:
    events = list(events)
    if not events:
        return ""
    if sort_by is not None:
        events.sort(key=lambda event: getattr(event, sort_by), reverse=True)
    has_input_shapes = any(event.input_shapes for event in events)
    name_width = min(max(len(event.key) for event in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(event.input_shapes)) for event in events) + 4, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [12] * 6
    if has_input_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(event.self_cpu_time_total for event in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    lines += [separator, row_format.format(*headers), separator]
    for event in events[:row_limit]:
        name = event.key
        if len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        row = [
            name,
            _format_time_share(event.self_cpu_time_total, total),
            _format_time(event.self_cpu_time_total),
            _format_time_share(event.cpu_time_total, total),
            _format_time(event.cpu_time_total),
            _format_time(event.cpu_time),
            event.count,
        ]
        if has_input_shapes:
            row.append(str(event.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {_format_time(total)}"]
    return "".join(line + "\n" for line in lines)
