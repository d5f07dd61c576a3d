"""Path converters."""

from __future__ import annotations


class Int64Converter:
    """A non-negative integer the database's bigint columns hold: at most 18 digits, so
    a longer one is a 404 like any number that names nothing, not an overflow (500)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
