"""JSON that agents sent, shown to operators as text."""

from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON, left unmarked so the template escapes it: agents write it."""
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.filter
def as_text(value: Any) -> str:
    """A string as it is (an agent's "why"), anything else as indented JSON."""
    return value if isinstance(value, str) else pretty_json(value)
