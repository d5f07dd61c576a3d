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
    # The title names the agent's tool: escaped in the header too, and above all in `text`,
    # which Slack reads as mrkdwn (a tool called "<!channel>" would page the channel).
    title = slack_escape(title)
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": _clip(title, SLACK_HEADER_LIMIT)}}]
    if fields:
        blocks.append({"type": "section", "fields": fields})
    # What a reviewer reads, a section each, the agent's words before its (long) arguments.
    for key, value in sorted((content or {}).items(), key=lambda item: item[0] == "args"):
        if value in (None, "", {}, []):
            continue
        shown = value if isinstance(value, str) else orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        block_text = f"*{key.capitalize()}*\n```{_clip(slack_escape(shown), SLACK_TEXT_LIMIT - len(key) - 12)}```"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": block_text}})
    if data.get("url"):
        blocks.append({
            "type": "actions",
            "elements": [{
                "type": "button", "action_id": "open_in_console", "url": data["url"], "style": "primary",
                "text": {"type": "plain_text", "text": _clip("Open in MemoryHub", SLACK_BUTTON_TEXT_LIMIT)},
            }],
        })
    return orjson.dumps({"text": _clip(title, SLACK_TEXT_LIMIT), "blocks": blocks})


def _one_line(text: str, limit: int) -> str:
    return _clip(" ".join(text.split()), limit)


def email(*, workspace: str, title: str, data: dict[str, Any], summary: str, settings_url: str) -> tuple[str, str]:
    """An email's subject and plain-text body: what happened, the names, the agent's own
    summary, and the link (decisions are taken on the page behind it, never by the link).
    Plain text only: nothing an agent wrote can become markup or a header."""
    subject = _one_line(f"[MemoryHub {workspace}] {title}", 300)
    lines = [title, ""]
    for key, label in (("agent", "Agent"), ("tool", "Tool"), ("status", "Status"), ("session_id", "Session")):
        if data.get(key):
            lines.append(f"{label}: {_one_line(str(data[key]), 200)}")
    lines.append(f"Workspace: {workspace}")
    if summary:
        lines += ["", "What the agent says:", _clip(summary.strip(), 2000)]
    if data.get("url"):
        lines += ["", "Open it in MemoryHub to decide (you will be asked to log in):", data["url"]]
    lines += ["", "--", f"You get this email because you asked for it in workspace {workspace}. Change that here: {settings_url}"]
    return subject, "\n".join(lines) + "\n"


def body(*, format: str, event: str, at: datetime, title: str, data: dict[str, Any], content: dict[str, Any] | None) -> bytes:
    """The body for an endpoint of `format`; `content` is None unless it asked for it."""
    if format == WebhookFormat.SLACK:
        return slack_body(title=title, data=data, content=content)
    return standard_body(event=event, at=at, data=data | (content or {}))
