"""Slack's rules for an incoming-webhook message, written down from its Block Kit reference
(api.slack.com/reference/block-kit: blocks, block elements, composition objects), as a
receiver checks them: what a message breaks, in Slack's words where Slack has some."""

from __future__ import annotations

from typing import Any

MAX_BLOCKS = 50  # a message's blocks
TEXT_TYPES = ("plain_text", "mrkdwn")
# block type: (field, limit) pairs and what each block must hold
SECTION_TEXT, SECTION_FIELDS, FIELD_TEXT = 3000, 10, 2000
HEADER_TEXT = 150
ACTIONS_ELEMENTS = 25
CONTEXT_ELEMENTS = 10
BUTTON_TEXT, BUTTON_URL, BUTTON_VALUE, ACTION_ID, BLOCK_ID = 75, 3000, 2000, 255, 255
BUTTON_STYLES = ("primary", "danger")


def _text_object(value: Any, where: str, *, limit: int, plain_only: bool = False) -> list[str]:
    if not isinstance(value, dict) or value.get("type") not in (("plain_text",) if plain_only else TEXT_TYPES):
        return [f"{where}: must be a {'plain_text' if plain_only else 'text'} object"]
    text = value.get("text")
    if not isinstance(text, str) or not text:
        return [f"{where}.text: must be a non-empty string"]
    if len(text) > limit:
        return [f"{where}.text: longer than {limit} characters ({len(text)})"]
    return []


def _button(element: dict[str, Any], where: str, action_ids: set[str]) -> list[str]:
    problems = _text_object(element.get("text"), f"{where}.text", limit=BUTTON_TEXT, plain_only=True)
    action_id = element.get("action_id", "")
    if len(action_id) > ACTION_ID:
        problems.append(f"{where}.action_id: longer than {ACTION_ID}")
    if action_id and action_id in action_ids:
        problems.append(f"{where}.action_id: not unique in the message")
    action_ids.add(action_id)
    if "url" in element and (not isinstance(element["url"], str) or len(element["url"]) > BUTTON_URL or not element["url"].startswith(("http://", "https://"))):
        problems.append(f"{where}.url: must be an http(s) URL of at most {BUTTON_URL} characters")
    if "value" in element and len(element["value"]) > BUTTON_VALUE:
        problems.append(f"{where}.value: longer than {BUTTON_VALUE}")
    if "style" in element and element["style"] not in BUTTON_STYLES:
        problems.append(f"{where}.style: one of {BUTTON_STYLES}")
    return problems


def message_problems(body: Any) -> list[str]:
    """Every rule `body` breaks; [] for a message Slack would post."""
    if not isinstance(body, dict):
        return ["the body must be a JSON object"]
    problems = []
    if not isinstance(body.get("text"), str) or not body["text"]:
        # With blocks, `text` is the notification's and screen readers' fallback: Slack asks for it.
        problems.append("text: the fallback text is missing")
    blocks = body.get("blocks", [])
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return [*problems, f"blocks: a list of at most {MAX_BLOCKS}"]
    action_ids: set[str] = set()
    for index, block in enumerate(blocks):
        where = f"blocks[{index}]"
        kind = block.get("type")
        if len(block.get("block_id", "")) > BLOCK_ID:
            problems.append(f"{where}.block_id: longer than {BLOCK_ID}")
        if kind == "header":
            problems += _text_object(block.get("text"), f"{where}.text", limit=HEADER_TEXT, plain_only=True)
        elif kind == "section":
            if "text" not in block and "fields" not in block:
                problems.append(f"{where}: a section needs text or fields")
            if "text" in block:
                problems += _text_object(block["text"], f"{where}.text", limit=SECTION_TEXT)
            fields = block.get("fields", [])
            if len(fields) > SECTION_FIELDS:
                problems.append(f"{where}.fields: more than {SECTION_FIELDS}")
            for number, field in enumerate(fields):
                problems += _text_object(field, f"{where}.fields[{number}]", limit=FIELD_TEXT)
        elif kind == "actions":
            elements = block.get("elements", [])
            if not elements or len(elements) > ACTIONS_ELEMENTS:
                problems.append(f"{where}.elements: 1 to {ACTIONS_ELEMENTS}")
            for number, element in enumerate(elements):
                if element.get("type") != "button":
                    problems.append(f"{where}.elements[{number}]: only buttons are checked here")
                else:
                    problems += _button(element, f"{where}.elements[{number}]", action_ids)
        elif kind == "context":
            elements = block.get("elements", [])
            if not elements or len(elements) > CONTEXT_ELEMENTS:
                problems.append(f"{where}.elements: 1 to {CONTEXT_ELEMENTS}")
            for number, element in enumerate(elements):
                problems += _text_object(element, f"{where}.elements[{number}]", limit=SECTION_TEXT)
        elif kind != "divider":
            problems.append(f"{where}.type: {kind!r} is not a block this receiver knows")
    return problems
