"""Each resource's JSON, defined once: the REST API answers with it, the MCP tools return
it and the console's downloads write it, so that an entry, an approval or a tool call
reads the same whichever way it is fetched. Plain dicts built directly (a serializer
per row cost more than storing a batch of 500); dates in ISO 8601 with `Z` for UTC.

A layer of its own above the domain apps, whose models it reads, and below the front
ends, which cannot import each other."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone


def iso_datetime(moment: datetime | None) -> str | None:
    """A date as the API writes it (DRF's ISO 8601): the current time zone, `Z` for UTC."""
    if moment is None:
        return None
    text = moment.astimezone(timezone.get_current_timezone()).isoformat() if timezone.is_aware(moment) else moment.isoformat()
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text
