"""What every console page shows the same way: times, breadcrumbs, flash messages, costs."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django import template
from django.contrib.messages import get_messages
from django.contrib.messages.storage.base import Message
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

ABSOLUTE_FORMAT = "Y-m-d H:i:s T"


def relative(moment: datetime, now: datetime | None = None) -> str:
    """"3 min ago", "in 2 h": coarse on purpose, the absolute time is beside it.
    static/console/times.js says the same words when it refreshes them."""
    seconds = ((now or timezone.now()) - moment).total_seconds()
    past, seconds = seconds >= 0, abs(seconds)
    if seconds < 60:
        return "just now" if past else "in under a minute"
    minutes, hours, days = int(seconds // 60), int(seconds // 3600), int(seconds // 86400)
    if minutes < 90:
        amount = f"{minutes} min"
    elif hours < 48:
        amount = f"{hours} h"
    elif days < 60:
        amount = f"{days} days"
    elif days < 730:
        amount = f"{days // 30} months"
    else:
        amount = f"{days // 365} years"
    return f"{amount} ago" if past else f"in {amount}"


def _time(moment: datetime | None, empty: str, exact: bool) -> SafeString | str:
    if moment is None:
        return empty
    local = timezone.localtime(moment)
    absolute, ago = date_format(local, ABSOLUTE_FORMAT), relative(moment)
    if exact:
        return format_html('<time datetime="{}" title="{}" data-relative="title">{}</time>', moment.isoformat(), ago, absolute)
    # The absolute time is the title (a pointer shows it) and hidden text (a screen reader says it).
    return format_html(
        '<time datetime="{}" title="{}"><span data-relative>{}</span><span class="visually-hidden"> ({})</span></time>',
        moment.isoformat(), absolute, ago, absolute,
    )


@register.filter
def when(moment: datetime | None, empty: str = "—") -> SafeString | str:
    """`{{ x.created_at|when }}`: "3 min ago", the absolute time on hover;
    `{{ x.expires_at|when:"never" }}` says "never" for None."""
    return _time(moment, empty, exact=False)


@register.filter
def when_exact(moment: datetime | None, empty: str = "—") -> SafeString | str:
    """`{{ x.created_at|when_exact }}`: the absolute time shown, the relative one on hover;
    for records read for their exact time (the audit log)."""
    return _time(moment, empty, exact=True)


@register.inclusion_tag("console/breadcrumbs.html")
def breadcrumbs(*parts: Any) -> dict[str, list[tuple[Any, Any]]]:
    """`{% breadcrumbs "Sessions" sessions_url session.session_id %}`: label, URL, label,
    URL, …, then the current page's label alone (not a link)."""
    crumbs = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
    if len(parts) % 2:
        crumbs.append((parts[-1], None))
    return {"crumbs": crumbs}


@register.simple_tag(takes_context=True)
def flash_messages(context: template.Context) -> list[Message]:
    """The request's flash messages, whatever a page's own context calls "messages"."""
    request = context.get("request")
    return list(get_messages(request)) if request is not None else []


@register.filter
def money(value: Decimal | float | None) -> str:
    """`{{ line.cost|money }}`: "$12.31", "$0.0262" (console/charts.py writes the same)."""
    from console.charts import money as written

    # "": what the template had for a value it could not find (string_if_invalid).
    return written(None if value == "" else value)
