"""Summarisers behind one interface: a built-in extractive one (no model, the default)
and any OpenAI-compatible chat endpoint (MEMORYHUB_SUMMARIZER=openai)."""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Sequence
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from memoryhub.core.connections import connection_release
from memoryhub.core.errors import ApplicationError
from memoryhub.memory.local_model import count_tokens
from memoryhub.usage import metering
from memoryhub.usage.models import Operation


# Sentences worth keeping when nothing understands the text: they name someone or
# something, carry a number or a date, or record a decision or an open task.
DECISION = re.compile(r"\b(decid\w*|agree\w*|will|won't|plan\w*|must|need to|todo|to-do|deadline|confirm\w*|cancel\w*|chose|choose)\b", re.I)
NUMBER = re.compile(r"\d")
NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


class ContextMessage(Protocol):
    """A message as contexts are built and summarised from it: a stored one, or one the
    agent sent with its request."""

    seq: int
    role: str
    content: str
    tool_calls: list[dict] | None
    tool_call_id: str | None
    pinned: bool


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
        self._usage = threading.local()

    def tokens_used(self) -> tuple[int | None, int | None]:
        """(input, output) tokens the endpoint said this thread's last call used, where it said."""
        used, self._usage.value = getattr(self._usage, "value", None) or (None, None), None
        return used

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
            answer = response.json()
            text = answer["choices"][0]["message"]["content"]
            usage = answer.get("usage") or {}
            self._usage.value = (usage.get("prompt_tokens"), usage.get("completion_tokens")) if isinstance(usage, dict) else None
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise SummariserError("The summariser endpoint answered something that is not a chat completion.") from exc
        if not isinstance(text, str) or not text.strip():
            raise SummariserError("The summariser endpoint answered an empty summary.")
        return text.strip()[:max_chars]


class MeteredSummariser:
    """The configured summariser, every call metered (memoryhub.usage) and refused beyond
    the workspace's budget when priced: the one place summaries are counted."""

    def __init__(self, inner: Summariser, provider: str) -> None:
        self.inner, self.provider = inner, provider
        self.name: str = inner.name  # what stored summaries name as their summariser

    def summarise(self, messages: Sequence[ContextMessage], *, max_chars: int = 1200) -> str:
        texts = [m.content for m in messages if m.content]
        read = functools.cache(lambda: count_tokens(texts))
        metering.ensure_within_budget(provider=self.provider, input_tokens=read)
        started = time.perf_counter()
        summary = self.inner.summarise(messages, max_chars=max_chars)
        duration_ms = (time.perf_counter() - started) * 1000
        reported_in, reported_out = self.inner.tokens_used() if isinstance(self.inner, OpenAIChatSummariser) else (None, None)
        metering.record(
            provider=self.provider, operation=Operation.SUMMARIZE, items=len(texts),
            input_tokens=reported_in if isinstance(reported_in, int) else read(),
            output_tokens=reported_out if isinstance(reported_out, int) else count_tokens([summary]), duration_ms=duration_ms,
        )
        return summary


def summariser_name() -> str:
    """How usage names the summariser: MEMORYHUB_SUMMARIZER_PROVIDER_NAME, else `local` for
    the built-in extractive one and the endpoint's host for a remote one."""
    from django.conf import settings

    if settings.MEMORYHUB_SUMMARIZER_PROVIDER_NAME:
        return settings.MEMORYHUB_SUMMARIZER_PROVIDER_NAME
    if settings.MEMORYHUB_SUMMARIZER != "openai":
        return "local"
    return urlsplit(settings.MEMORYHUB_SUMMARIZER_URL).hostname or "summarizer"


def get_summariser() -> Summariser:
    from django.conf import settings

    inner: Summariser = ExtractiveSummariser()
    if settings.MEMORYHUB_SUMMARIZER == "openai":
        inner = OpenAIChatSummariser(
            base_url=settings.MEMORYHUB_SUMMARIZER_URL,
            model=settings.MEMORYHUB_SUMMARIZER_MODEL,
            api_key=settings.MEMORYHUB_SUMMARIZER_API_KEY,
            timeout=settings.MEMORYHUB_SUMMARIZER_TIMEOUT,
        )
    return MeteredSummariser(inner, summariser_name()) if settings.MEMORYHUB_USAGE_METERING else inner
