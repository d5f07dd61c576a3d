"""Request bodies: JSON only, parsed by orjson, and only what the database can keep."""

from __future__ import annotations

import io
import math
from typing import Any

import orjson
from rest_framework.parsers import JSONParser, get_encoding

from memoryhub.core.errors import ApplicationError
from memoryhub.core.text import text_problem

# Deeper than any memory, state or tool call needs; a limit so that what is stored can
# be read back (Python's own parser gives up near 1,000 levels) and walked cheaply.
MAX_JSON_DEPTH = 64
INT64 = (-(2**63), 2**63 - 1)
# orjson reads integers beyond 64 bits as floats (rounded); such a float is at least this.
ROUNDED_INTEGER_FLOOR = float(2**63)


class MayBeRounded(Exception):
    """orjson may have turned an integer beyond 64 bits into a float."""


class FastJSONParser(JSONParser):
    """orjson parses a batch of 500 vectors (4 MB) in ~10 ms where the standard library
    takes ~41 ms: a fifth of the whole request at ingest rates. Anything orjson refuses,
    a body that is not UTF-8, and any body where orjson may have rounded an integer
    beyond 64 bits go through DRF's own parser, so what is accepted, what is refused,
    the values and the error messages stay exactly as they were.

    What either parser accepts is then refused with a 400 if PostgreSQL could not keep
    it (NUL characters, lone surrogates, numbers beyond 64 bits or not finite) or if it
    is nested deeper than MAX_JSON_DEPTH: such input used to end as a 500 halfway
    through a write, or be stored and come back as a body no parser reads."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if get_encoding(parser_context or {}).lower().replace("-", "") == "utf8":
            try:
                data = orjson.loads(raw)
                refuse_unstorable(data, from_orjson=True)
                return data
            except (orjson.JSONDecodeError, MayBeRounded):
                pass
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise _refused((), f"JSON nested deeper than {MAX_JSON_DEPTH} levels.") from None
        refuse_unstorable(data, from_orjson=False)
        return data


def refuse_unstorable(data: Any, *, from_orjson: bool) -> None:
    """Raise a 400 naming the first value PostgreSQL could not keep (or MayBeRounded: in
    orjson's output, a float that may stand for a larger integer). One pass, without
    paths; the path of a problem is found by a second pass when there is one."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if depth > MAX_JSON_DEPTH:
                _raise_with_path(data, from_orjson=from_orjson)
            if kind is list and item and type(item[0]) is float and _plain_numbers(item, from_orjson=from_orjson):
                continue  # a vector (most of a batch's bytes): checked in C
            if kind is dict:
                for key in item:
                    if text_problem(key):
                        _raise_with_path(data, from_orjson=from_orjson)
                values = item.values()
            else:
                values = item
            stack.extend((value, depth + 1) for value in values)
        elif kind is str:
            if text_problem(item):
                _raise_with_path(data, from_orjson=from_orjson)
        elif kind is int or kind is float:
            if _number_problem(item, from_orjson=from_orjson):
                _raise_with_path(data, from_orjson=from_orjson)


def _plain_numbers(values: list[Any], *, from_orjson: bool) -> bool:
    """Only numbers within 64 bits, finite (orjson never yields NaN or infinity)."""
    try:
        if not (-ROUNDED_INTEGER_FLOOR < min(values) and max(values) < ROUNDED_INTEGER_FLOOR):
            return False
        return from_orjson or math.isfinite(math.fsum(values))
    except (TypeError, OverflowError, ValueError):
        return False


def _number_problem(number: int | float, *, from_orjson: bool) -> str | None:
    if type(number) is float:
        if from_orjson and abs(number) >= ROUNDED_INTEGER_FLOOR:
            raise MayBeRounded()
        return None if math.isfinite(number) else "Numbers must be finite."
    return None if INT64[0] <= number <= INT64[1] else "Integers are at most 64 bits."


def _raise_with_path(data: Any, *, from_orjson: bool) -> None:
    """The slow walk, with paths, once a problem is known to be there."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict | list):
            if len(path) >= MAX_JSON_DEPTH:
                raise _refused(path, f"JSON nested deeper than {MAX_JSON_DEPTH} levels.")
            pairs = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
            for key, value in reversed(pairs):
                if isinstance(key, str) and (problem := text_problem(key)):
                    raise _refused((*path, key), problem)
                stack.append((value, (*path, key)))
        elif isinstance(item, str) and (problem := text_problem(item)):
            raise _refused(path, problem)
        elif type(item) in (int, float) and (problem := _number_problem(item, from_orjson=from_orjson)):
            raise _refused(path, problem)
    raise AssertionError("a problem was found, then not")  # pragma: no cover


def _refused(path: tuple[Any, ...], problem: str) -> ApplicationError:
    # Keys are shown escaped: the offending character may be in one.
    where = "$" + "".join(f"[{key}]" if isinstance(key, int) else "." + key.encode("unicode_escape", "backslashreplace").decode() for key in path)
    return ApplicationError(f"{problem} (at {where})", code="UNSUPPORTED_JSON", details={"path": where})
