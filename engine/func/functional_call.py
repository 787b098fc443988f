"""`functional_call`: a module called with some of its parameters and buffers replaced for one call."""

from __future__ import annotations

from typing import Any


def functional_call(
    module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """module(*args, **kwargs) with the named tensors in place of its parameters and buffers, put back after."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        values = dict(dicts)
    elif isinstance(dicts, (list, tuple)) and all(isinstance(d, dict) for d in dicts):
        values = {}
        for d in dicts:
            for key in d:
                if key in values:
                    raise ValueError(
                        f"{key} appeared in multiple dictionaries; behavior of functional call is ambiguous"
                    )
            values.update(d)
    else:
        raise ValueError(
            f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got {type(dicts)}"
        )
    tables = {}  # dotted name -> (the dict holding it, its key)
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for table in (sub._parameters, sub._buffers):
            for key in table:
                tables[f"{prefix}.{key}" if prefix else key] = (table, key)
    if strict:
        missing = sorted(set(tables) - set(values))
        unexpected = sorted(set(values) - set(tables))
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(type(module).__name__, "\n\t".join(parts))
            )
    if tie_weights:  # a tensor shared under several names takes the value given for any of them
        by_original = {id(tables[k][0][tables[k][1]]): v for k, v in values.items() if k in tables}
        for name, (table, key) in tables.items():
            if name not in values and table[key] is not None and id(table[key]) in by_original:
                values[name] = by_original[id(table[key])]
    originals = {}
    try:
        for name, value in values.items():
            if name in tables:
                table, key = tables[name]
                originals[name] = table[key]
                table[key] = value
        args = args if isinstance(args, tuple) else () if args is None else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for name, value in originals.items():
            table, key = tables[name]
            table[key] = value
