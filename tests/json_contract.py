"""`validated(document)`: a command's JSON document, checked against the schema it names.

The schemas are the ones gradcli ships (gradcli/schemas/*.json), so every test that parses a
`--format json` document also checks the contract; a document that breaks it fails the test
with each violation's path and message.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from gradcli.schemas import NAMES, schema

#: Schema id ("gradcli.check/1") -> validator of the shipped schema.
VALIDATORS = {schema(name)["title"]: Draft202012Validator(schema(name)) for name in NAMES}


def violations(document: Any, schema_id: str | None = None) -> list[str]:
    """Every way `document` breaks its schema (the one named in its "schema" key, unless given)."""
    schema_id = schema_id or (document.get("schema") if isinstance(document, dict) else None)
    if schema_id not in VALIDATORS:
        return [f"no schema named {schema_id!r} (known: {', '.join(VALIDATORS)})"]
    errors = VALIDATORS[schema_id].iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]


def validated(document: str | dict) -> dict:
    """`document` (text or parsed) as data, after asserting that it follows its schema."""
    data = json.loads(document) if isinstance(document, str) else document
    problems = violations(data)
    assert not problems, "document breaks its schema:\n" + "\n".join(problems[:20])
    return data
