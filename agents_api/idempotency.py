"""Idempotent retries of POSTs (docs/api.md, "Conventions"): the request runs in one
transaction with its claim on the key, and its answer is stored before it commits
(memoryhub.core.idempotency explains why that settles every race)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from rest_framework.request import Request

from memoryhub.core.idempotency import Claim, idempotency_answer, idempotency_claim, idempotency_key_checked, request_fingerprint


class Replayed(Exception):
    """The answer to an earlier request with this Idempotency-Key and body."""

    def __init__(self, response: HttpResponse) -> None:
        self.response = response


def user_ids_in(data: Any) -> set[str]:
    """Every `user_id` an answer mentions: the users whose purge must take it along."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("user_id"), str):
                found.add(item["user_id"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


class IdempotentPosts:
    # For DRF views: dispatch wraps a keyed POST in its transaction; the view's
    # `initial` calls `idempotency_key_claim` once the caller is known.

    claim: Claim | None = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method != "POST" or "HTTP_IDEMPOTENCY_KEY" not in request.META:
            return super().dispatch(request, *args, **kwargs)
        with transaction.atomic():
            response = super().dispatch(request, *args, **kwargs)
            if self.claim is None:
                return response  # a replay, or refused before the claim
            if not 200 <= response.status_code < 300:
                # Nothing is kept of a refused request: its key stays free for a corrected retry.
                transaction.set_rollback(True)
                return response
            response.render()
            status, body = self.replay_answer(response)
            try:
                idempotency_answer(
                    claim=self.claim, status=status, body=body,
                    content_type=response.get("Content-Type", "application/json"),
                    user_ids=[*user_ids_in(getattr(response, "data", None)), *self.answer_user_ids()],
                )
            except Exception as refused:  # the purge fence: an answer about a user being erased
                transaction.set_rollback(True)
                return self.finalize_response(self.request, self.handle_exception(refused), *args, **kwargs)
        return response

    def idempotency_key_claim(self, request: Request) -> None:
        key = request.headers.get("Idempotency-Key")
        if request.method != "POST" or key is None:
            return
        claim = idempotency_claim(
            workspace=request.user.workspace, credential=request.user.credential, key=idempotency_key_checked(key),
            fingerprint=request_fingerprint(method=request.method, path=request.get_full_path(), body=request.body),
        )
        if claim.replay is not None:
            answer = HttpResponse(bytes(claim.replay.body), status=claim.replay.status, content_type=claim.replay.content_type)
            answer["Idempotent-Replayed"] = "true"
            raise Replayed(answer)
        self.claim = claim

    def handle_exception(self, exc: Exception) -> HttpResponseBase:
        if isinstance(exc, Replayed):
            return exc.response
        return super().handle_exception(exc)

    def replay_answer(self, response: HttpResponseBase) -> tuple[int, bytes]:
        """What a replay of this request answers: the answer itself, unless it holds a
        secret that must not be kept (a minted key's plaintext)."""
        return response.status_code, response.content  # type: ignore[attr-defined]

    def answer_user_ids(self) -> list[str]:
        """Users an answer is about beyond the user_ids it names (a session's user)."""
        return []
