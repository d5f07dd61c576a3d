"""What text the database can store. PostgreSQL refuses NUL characters in text and
jsonb, and UTF-8 has no encoding of a lone surrogate (JSON's `\\ud800` escape can carry
one in): every front end refuses both up front, with this one check, rather than fail
the statement."""

from __future__ import annotations


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored, or None."""
    if "\x00" in text:
        return "Text may not contain NUL characters (\\u0000)."
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:
            return "Text may not contain lone surrogates (an unpaired \\ud800–\\udfff escape)."
    return None
