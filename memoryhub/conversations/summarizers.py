"""Summarisers: a built-in extractive one (no model) and, later, any OpenAI-compatible
chat endpoint behind the same interface."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from memoryhub.conversations.context import ContextMessage

# Sentences worth keeping when nothing understands the text: they name someone or
# something, carry a number or a date, or record a decision or an open task.
DECISION = re.compile(r"\b(decid\w*|agree\w*|will|won't|plan\w*|must|need to|todo|to-do|deadline|confirm\w*|cancel\w*|chose|choose)\b", re.I)
NUMBER = re.compile(r"\d")
NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


class Summariser(Protocol):
    name: str

    def summarise(self, messages: Sequence[ContextMessage], *, max_chars: int) -> str: ...


class ExtractiveSummariser:
    """Keeps the sentences that carry names, numbers, decisions and open tasks, in
    their order, with who said them, up to `max_chars`."""

    name = "extractive-v1"

    def summarise(self, messages: Sequence[ContextMessage], *, max_chars: int = 1200) -> str:
        scored: list[tuple[int, int, str]] = []
        order = 0
        for message in messages:
            if message.role == "tool":
                text = (message.content or "")[:200]
                scored.append((1, order, f"tool result: {text}"))
                order += 1
                continue
            for sentence in SENTENCE.split(message.content or ""):
                sentence = sentence.strip()
                if not sentence:
                    continue
                score = 2 * bool(DECISION.search(sentence)) + bool(NUMBER.search(sentence)) + bool(NAME.search(sentence))
                scored.append((score, order, f"{message.role}: {sentence}"))
                order += 1
        chosen: list[tuple[int, str]] = []
        used = 0
        for score, position, line in sorted(scored, key=lambda item: (-item[0], item[1])):
            if used + len(line) + 1 > max_chars:
                continue
            chosen.append((position, line))
            used += len(line) + 1
        return "\n".join(line for _, line in sorted(chosen))
