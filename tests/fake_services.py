"""A small real HTTP server on 127.0.0.1 standing in for an OpenAI-compatible service
(embeddings and chat completions)."""

from __future__ import annotations

import hashlib
import json
import math
import threading
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


@dataclass
class FakeEmbeddings:
    url: str
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    fail_with: int | None = None
    dimensions: int = FAKE_DIMENSIONS


@contextmanager
def fake_openai_embeddings() -> Iterator[FakeEmbeddings]:
    state = FakeEmbeddings(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.headers.append(dict(self.headers))
            if self.path == "/v1/chat/completions" and not state.fail_with:
                transcript = body["messages"][-1]["content"]
                summary = "Summary: " + " / ".join(line.split(": ", 1)[-1][:40] for line in transcript.splitlines())
                self._answer(200, {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": summary}}]})
            elif self.path not in ("/v1/embeddings", "/v1/chat/completions"):
                self._answer(404, {"error": "not found"})
            elif state.fail_with:
                self._answer(state.fail_with, {"error": {"message": "upstream trouble"}})
            else:
                data = [{"object": "embedding", "index": i, "embedding": bag_of_words_vector(t, state.dimensions)} for i, t in enumerate(body["input"])]
                self._answer(200, {"object": "list", "data": data, "model": body["model"]})

        def _answer(self, status: int, payload: dict) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
