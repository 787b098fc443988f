"""The renderers' dataclasses as JSON data: `dataclasses.asdict`, with one rule for numbers.

JSON has no NaN or infinity, so every schema writes them as the strings "nan", "inf" and
"-inf"; `finite` is that rule, and `as_json` applies it to a whole record.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection
from typing import Any


def finite(value: Any) -> Any:
    """A float that is not finite as "nan", "inf" or "-inf"; any other value as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def finite_all(value: Any) -> Any:
    """`finite` applied inside dicts, lists and tuples (tuples become lists, as JSON writes them)."""
    if isinstance(value, dict):
        return {key: finite_all(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_all(item) for item in value]
    return finite(value)


def as_json(record: Any, leave_out: Collection[str] = ()) -> dict[str, Any]:
    """A dataclass instance as JSON data: its fields in order, without `leave_out` (at every
    level of nested dataclasses), numbers made `finite`."""
    data = dataclasses.asdict(
        record, dict_factory=lambda items: {k: v for k, v in items if k not in leave_out}
    )
    return finite_all(data)
