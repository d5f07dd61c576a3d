"""An approval's `response_schema`: a JSON Schema written by the agent, checked against
what a human typed. The agent is not trusted with the hub's time: checking must stay
cheap whatever the schema says.

Three things make an agent's schema expensive with Python's `jsonschema`, each seen:
a backtracking pattern (`^(a+)+$` against 26 a's and a `!` held the interpreter for
2.6 s), references that branch (`a1: allOf [a0, a0]`, `a2: allOf [a1, a1]`… doubles
the work with each line), and remote references (the library would fetch them). So
schemas are checked by jsonschema-rs (by the authors of schemathesis; Rust): patterns
run on Rust's `regex` engine, linear in the text, and nothing is fetched; and a schema
whose references unfold into more than MAX_UNFOLDED subschemas, or refer to
themselves, is refused when the agent sends it.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import orjson

MAX_SCHEMA_BYTES = 64 * 1024
# Subschemas once every `$ref` is replaced by what it points at: a generous bound for
# schemas people write (a pydantic model with nested models unfolds into dozens).
MAX_UNFOLDED = 10_000
MAX_DEPTH = 40

# Keywords whose values are data, not schemas: a `$ref` inside them is a value.
DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords whose values map names (not keywords) to subschemas.
NAMED_SUBSCHEMAS = frozenset({"properties", "patternProperties", "dependentSchemas"})


class SchemaRefused(Exception):
    """The schema cannot be used: the message says why, for the agent."""


def _validator(schema: dict[str, Any]) -> Any:
    return jsonschema_rs.validator_for(schema, pattern_options=jsonschema_rs.RegexOptions(), offline=True)


def response_schema_check(schema: dict[str, Any]) -> None:
    """Refuse (SchemaRefused) a schema that is not JSON Schema or would be costly to check."""
    try:
        size = len(orjson.dumps(schema))
    except orjson.JSONEncodeError:  # nested past orjson's 255 levels
        raise SchemaRefused(f"it nests deeper than {MAX_DEPTH} levels") from None
    if size > MAX_SCHEMA_BYTES:
        raise SchemaRefused(f"it is larger than {MAX_SCHEMA_BYTES} bytes")
    # First, so that nothing deeper than MAX_DEPTH reaches the compiler.
    _unfolded_size(schema, root=schema, unfolding=(), sizes={})
    try:
        jsonschema_rs.meta.validate(schema)
        _validator(schema)
    except jsonschema_rs.ValidationError as exc:
        raise SchemaRefused(exc.message) from None
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaRefused(str(exc).splitlines()[0]) from None


def response_schema_violation(schema: dict[str, Any], instance: Any) -> str | None:
    """Why `instance` breaks `schema`, or None when it satisfies it."""
    try:
        validator = _validator(schema)
    except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError):
        # Stored before schemas were checked as they are now (a lookahead, say).
        return "the response schema cannot be checked (it uses a pattern or reference the hub refuses); approve or reject instead"
    error = next(iter(validator.iter_errors(instance)), None)
    if error is None:
        return None
    where = "/".join(str(part) for part in error.instance_path)
    return f"{error.message} (at /{where})" if where else error.message


def _unfolded_size(node: Any, *, root: dict[str, Any], unfolding: tuple[str, ...], sizes: dict[str, int], depth: int = 0) -> int:
    """How many subschemas `node` is once its references are unfolded (memoised per
    reference; SchemaRefused past MAX_UNFOLDED or on a reference to itself)."""
    if depth > MAX_DEPTH:
        raise SchemaRefused(f"it nests deeper than {MAX_DEPTH} levels")
    if isinstance(node, list):  # allOf's list and the like: its items are one level down
        return sum(_unfolded_size(item, root=root, unfolding=unfolding, sizes=sizes, depth=depth) for item in node)
    below = {"root": root, "unfolding": unfolding, "sizes": sizes, "depth": depth + 1}
    if not isinstance(node, dict):
        return 0
    size = 1
    for keyword, value in node.items():
        if keyword in DATA_KEYWORDS or keyword in ("$defs", "definitions"):
            continue  # data; definitions count where they are referred to
        if keyword in ("$dynamicRef", "$recursiveRef") or (keyword == "$id" and node is not root):
            raise SchemaRefused(f"{keyword} inside a schema is not supported; use $ref to #/$defs/…")
        if keyword == "$ref" and isinstance(value, str):
            size += _reference_size(value, **below)
        elif keyword in NAMED_SUBSCHEMAS and isinstance(value, dict):
            size += sum(_unfolded_size(sub, **below) for sub in value.values())
        else:
            size += _unfolded_size(value, **below)
        if size > MAX_UNFOLDED:
            raise SchemaRefused(f"its references unfold into more than {MAX_UNFOLDED} subschemas")
    return size


def _reference_size(reference: str, *, root: dict[str, Any], unfolding: tuple[str, ...], sizes: dict[str, int], depth: int) -> int:
    if reference in sizes:
        return sizes[reference]
    if reference in unfolding:
        raise SchemaRefused(f"$ref {reference!r} refers to itself; recursive schemas are not supported")
    if not (reference == "#" or reference.startswith("#/")):
        raise SchemaRefused(f"$ref {reference!r} is not a reference inside the schema (#/$defs/…)")
    target: Any = root
    for part in reference[2:].split("/") if reference != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        target = target.get(part) if isinstance(target, dict) else None
    if target is None:
        raise SchemaRefused(f"$ref {reference!r} points at nothing")
    sizes[reference] = _unfolded_size(target, root=root, unfolding=(*unfolding, reference), sizes=sizes, depth=depth)
    return sizes[reference]
