"""Keyset pagination: every list of the API is read page by page with an opaque cursor.

A page continues after the last row of the one before by the value of a unique,
ordered key (a message's seq, a row's id, a checkpoint's version), never by an offset:
rows added between two requests neither repeat nor push others off a page."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model, QuerySet

from memoryhub.core.errors import ApplicationError

T = TypeVar("T", bound=Model)

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


@dataclass
class Page(Generic[T]):
    results: list[T]
    next: str | None  # the cursor of the following page; None on the last one


def cursor_encode(value: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([value]).encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> int:
    try:
        [value] = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, TypeError):
        value = None
    # bool is an int to Python; and keys are at most 64-bit in the database.
    if type(value) is not int or not -(2**63) <= value < 2**63:
        raise ApplicationError("The cursor is not one this API gave out.", code="INVALID_CURSOR")
    return value


def keyset_page(rows: QuerySet[T], *, key: str, cursor: str | None, limit: int) -> Page[T]:
    """One page of `rows` ordered by the unique integer field `key` ("-id": descending),
    starting after the row the cursor names."""
    field = key.lstrip("-")
    rows = rows.order_by(key)
    if cursor:
        rows = rows.filter(**{f"{field}__{'lt' if key.startswith('-') else 'gt'}": cursor_decode(cursor)})
    found = list(rows[: limit + 1])
    more = len(found) > limit
    results = found[:limit]
    return Page(results=results, next=cursor_encode(getattr(results[-1], field)) if more else None)
