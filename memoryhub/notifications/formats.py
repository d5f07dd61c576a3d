"""The bodies a delivery carries: Standard Webhooks' `{type, timestamp, data}`, or Slack's
incoming-webhook message (`text` + Block Kit `blocks`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from memoryhub.notifications.models import WebhookFormat

# Block Kit's limits (docs/notifications.md lists them; the tests' receiver holds us to them).
SLACK_TEXT_LIMIT = 3000
SLACK_HEADER_LIMIT = 150
SLACK_FIELD_LIMIT = 2000
SLACK_BUTTON_TEXT_LIMIT = 75


def standard_body(*, event: str, at: datetime, data: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": event, "timestamp": at.isoformat().replace("+00:00", "Z"), "data": data})


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def slack_escape(text: str) -> str:
    """Slack's three control characters, escaped as its docs ask: an agent's text never
    becomes a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_body(*, title: str, data: dict[str, Any], content: dict[str, Any] | None) -> bytes:
    """What is asked (or what happened), by which agent, and a button to open it in the
    console. Names and content are agents' text: escaped, and shown as code where long."""
    fields = [
        {"type": "mrkdwn", "text": _clip(f"*{label}*\n{slack_escape(str(data[key]))}", SLACK_FIELD_LIMIT)}
        for key, label in (("agent", "Agent"), ("tool", "Tool"), ("status", "Status"), ("workspace", "Workspace"))
        if data.get(key)
    ]
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": _clip(title, SLACK_HEADER_LIMIT)}}]
    if fields:
        blocks.append({"type": "section", "fields": fields})
    if content:
        shown = orjson.dumps(content, option=orjson.OPT_INDENT_2).decode()
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _clip(f"```{slack_escape(shown)}```", SLACK_TEXT_LIMIT)}})
    if data.get("url"):
        blocks.append({
            "type": "actions",
            "elements": [{
                "type": "button", "action_id": "open_in_console", "url": data["url"], "style": "primary",
                "text": {"type": "plain_text", "text": _clip("Open in MemoryHub", SLACK_BUTTON_TEXT_LIMIT)},
            }],
        })
    return orjson.dumps({"text": _clip(title, SLACK_TEXT_LIMIT), "blocks": blocks})


def body(*, format: str, event: str, at: datetime, title: str, data: dict[str, Any], content: dict[str, Any] | None) -> bytes:
    """The body for an endpoint of `format`; `content` is None unless it asked for it."""
    if format == WebhookFormat.SLACK:
        return slack_body(title=title, data=data, content=content)
    return standard_body(event=event, at=at, data=data | (content or {}))
