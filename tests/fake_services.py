"""A small real HTTP server on 127.0.0.1 standing in for an OpenAI-compatible service
(embeddings and chat completions), and for a reranker."""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAKE_DIMENSIONS = 16


def bag_of_words_vector(text: str, dimensions: int = FAKE_DIMENSIONS) -> list[float]:
    """Deterministic: texts sharing words get similar vectors."""
    vector = [0.0] * dimensions
    for word in text.lower().split():
        digest = hashlib.sha256(word.strip(".,?!").encode()).digest()
        vector[digest[0] % dimensions] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class _JsonHandler(BaseHTTPRequestHandler):
    def _recorded(self, state: FakeEmbeddings | FakeReranker) -> dict:
        """The request's JSON body, kept with its headers in what the test reads."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        state.requests.append(body)
        state.headers.append(dict(self.headers))
        return body

    def _answer(self, status: int, payload: object) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on a free port of 127.0.0.1; yields its base URL, `…/v1`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # serve_forever looks for shutdown() every poll_interval: at its default (0.5 s) each
    # test that used a fake service waited that long to end.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class FakeEmbeddings:
    url: str
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    fail_with: int | None = None
    dimensions: int = FAKE_DIMENSIONS
    delay: float = 0.0  # seconds before each answer: a slow model
    # Whether answers say what they used, as OpenAI's do ("usage"): tokens counted as words here,
    # so that a test can tell the provider's count from the hub's own tokenizer's.
    reports_usage: bool = True


def word_count(texts: list[str]) -> int:
    return sum(len(text.split()) for text in texts)


@contextmanager
def fake_openai_embeddings() -> Iterator[FakeEmbeddings]:
    state = FakeEmbeddings(url="")

    class Handler(_JsonHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self._recorded(state)
            time.sleep(state.delay)
            if self.path == "/v1/chat/completions" and not state.fail_with:
                transcript = body["messages"][-1]["content"]
                summary = "Summary: " + " / ".join(line.split(": ", 1)[-1][:40] for line in transcript.splitlines())
                usage = {"usage": {"prompt_tokens": word_count([transcript]), "completion_tokens": word_count([summary])}} if state.reports_usage else {}
                self._answer(200, {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": summary}}], **usage})
            elif self.path not in ("/v1/embeddings", "/v1/chat/completions"):
                self._answer(404, {"error": "not found"})
            elif state.fail_with:
                self._answer(state.fail_with, {"error": {"message": "upstream trouble"}})
            else:
                data = [{"object": "embedding", "index": i, "embedding": bag_of_words_vector(t, state.dimensions)} for i, t in enumerate(body["input"])]
                usage = {"usage": {"prompt_tokens": word_count(body["input"]), "total_tokens": word_count(body["input"])}} if state.reports_usage else {}
                self._answer(200, {"object": "list", "data": data, "model": body["model"], **usage})

    with _serving(Handler) as state.url:
        yield state


@dataclass
class FakeReranker:
    """What the fake reranker was asked, and how it answers: a document scores the score
    of the first of `relevance`'s phrases it contains (0.01 without one), in the shape of
    the API it was asked in (Cohere's `documents`, or TEI's `texts`)."""

    url: str
    relevance: dict[str, float] = field(default_factory=dict)
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    fail_with: int | None = None
    delay: float = 0.0
    # Replaces the answer's list of scores when set (a broken or odd reranker).
    answer: object = None

    def score(self, document: str) -> float:
        return next((score for phrase, score in self.relevance.items() if phrase in document), 0.01)


@contextmanager
def fake_reranker() -> Iterator[FakeReranker]:
    state = FakeReranker(url="")

    class Handler(_JsonHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self._recorded(state)
            time.sleep(state.delay)
            if self.path != "/v1/rerank":
                return self._answer(404, {"error": "not found"})
            if state.fail_with:
                return self._answer(state.fail_with, {"error": {"message": "upstream trouble"}})
            tei = "texts" in body
            scored = [
                {"index": i, "score" if tei else "relevance_score": state.score(text)} for i, text in enumerate(body["texts" if tei else "documents"])
            ]
            scored.sort(key=lambda item: -item["score" if tei else "relevance_score"])  # best first, as both APIs answer
            items = scored if state.answer is None else state.answer
            self._answer(200, items if tei else {"results": items, "meta": {}})

    with _serving(Handler) as state.url:
        yield state
