"""Summarisers behind one interface: a built-in extractive one (no model, the default)
and any OpenAI-compatible chat endpoint (MEMORYHUB_SUMMARIZER=openai)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import httpx

from memoryhub.core.connections import connection_release
from memoryhub.core.errors import ApplicationError

if TYPE_CHECKING:  # the context module summarises through this one
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


class SummariserError(ApplicationError):
    def __init__(self, message: str) -> None:
        super().__init__(message, code="SUMMARIZER_UNAVAILABLE", status=503)


SUMMARY_PROMPT = (
    "Summarise this part of a conversation between a user and an AI agent for the agent's memory. "
    "Keep names, numbers, dates, decisions and open tasks; drop small talk. Plain text, at most {max_chars} characters."
)


class OpenAIChatSummariser:
    """Any OpenAI-compatible `POST {base_url}/chat/completions`."""

    def __init__(self, *, base_url: str, model: str, api_key: str, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"openai:{model}"

    def summarise(self, messages: Sequence[ContextMessage], *, max_chars: int = 1200) -> str:
        transcript = "\n".join(f"{m.role}: {m.content}" for m in messages if m.content)
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SUMMARY_PROMPT.format(max_chars=max_chars)},
                {"role": "user", "content": transcript},
            ],
            "temperature": 0,
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        connection_release()
        try:
            response = httpx.post(f"{self.base_url}/chat/completions", json=body, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise SummariserError(f"The summariser endpoint did not answer: {type(exc).__name__}.") from exc
        if response.status_code != 200:
            raise SummariserError(f"The summariser endpoint answered {response.status_code}.")
        try:
            text = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise SummariserError("The summariser endpoint answered something that is not a chat completion.") from exc
        if not isinstance(text, str) or not text.strip():
            raise SummariserError("The summariser endpoint answered an empty summary.")
        return text.strip()[:max_chars]


def get_summariser() -> Summariser:
    from django.conf import settings

    if settings.MEMORYHUB_SUMMARIZER == "openai":
        return OpenAIChatSummariser(
            base_url=settings.MEMORYHUB_SUMMARIZER_URL,
            model=settings.MEMORYHUB_SUMMARIZER_MODEL,
            api_key=settings.MEMORYHUB_SUMMARIZER_API_KEY,
            timeout=settings.MEMORYHUB_SUMMARIZER_TIMEOUT,
        )
    return ExtractiveSummariser()
