"""How a memory entry's stored columns are made from what it was given, one way for every
path that writes them: the store it goes to, its expiry, its text and data as the
workspace keeps them (redacted before anything is embedded), its vector."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError

from memoryhub.core import tasking
from memoryhub.core.errors import ApplicationError
from memoryhub.core.limits import json_size_problem
from memoryhub.core.models import Agent, Store, Workspace, validate_user_id
from memoryhub.core.text import text_problem
from memoryhub.memory.embeddings import checked_embedding, get_provider
from memoryhub.memory.models import MemoryType, Review, Scope
from memoryhub.memory.selectors import multi_predicates
from memoryhub.memory.services.inputs import MemoryInput, search_extra_text
from memoryhub.memory.typed_data import fact_key, validate_data
from memoryhub.privacy.redaction import redactor
from memoryhub.privacy.selectors import working_memory_ttl


@dataclass
class WriteRules:
    """What a workspace's memory writes follow: how it keeps text (redaction), which
    sources' memories wait for a person, its multi predicates and its working memories'
    lifetime (these two read once, when first needed)."""

    kept: Callable[[str], str]
    held_back: set[str]
    multi: Callable[[], frozenset[str]]
    working_ttl: Callable[[], timedelta]

    @classmethod
    def of(cls, workspace: Workspace) -> WriteRules:
        return cls(
            kept=kept_text(workspace), held_back=set(workspace.quarantine_sources),
            multi=functools.cache(functools.partial(multi_predicates, workspace_id=workspace.pk)),
            working_ttl=functools.cache(functools.partial(working_memory_ttl, workspace_id=workspace.pk)),
        )


def held_back(*, rules: WriteRules, source_kinds: tuple[str, ...]) -> bool:
    """Whether an entry from these sources waits for a person (quarantined): any of them is
    one the workspace holds back (an import's own kind, and its records' kinds)."""
    return any(kind in rules.held_back for kind in source_kinds)


MAX_TAGS = 64
MAX_TAG_CHARS = 100


def entry_checked(item: MemoryInput) -> None:
    """The limits every memory is held to, whoever writes it: an agent over the API or MCP
    (whose input checks say the same first, field by field, for their clients), the hub's
    own services, an import. ApplicationError (400) naming what is wrong."""
    content = item.content
    if not isinstance(content, str) or not content.strip():
        raise ApplicationError("content must be non-blank text.", code="INVALID_CONTENT")
    if len(content) > settings.MEMORYHUB_MAX_CONTENT_CHARS:
        raise ApplicationError(
            f"content is {len(content)} characters; the most is {settings.MEMORYHUB_MAX_CONTENT_CHARS}.", code="CONTENT_TOO_LONG",
            details={"limit": settings.MEMORYHUB_MAX_CONTENT_CHARS},
        )
    try:
        validate_user_id(item.user_id)
    except DjangoValidationError as error:
        raise ApplicationError(error.messages[0], code="INVALID_USER_ID") from None
    tags = item.tags
    if not isinstance(tags, list) or len(tags) > MAX_TAGS or not all(isinstance(t, str) and 0 < len(t) <= MAX_TAG_CHARS for t in tags):
        raise ApplicationError(f"tags must be at most {MAX_TAGS} strings of 1 to {MAX_TAG_CHARS} characters.", code="INVALID_TAGS")
    if not isinstance(item.metadata, dict):
        raise ApplicationError("metadata must be a JSON object.", code="INVALID_METADATA")
    for name, value in (("metadata", item.metadata), ("data", item.data)):
        if problem := json_size_problem(value):
            raise ApplicationError(f"{name}: {problem}", code="JSON_TOO_LARGE", details={"field": name})
    for name, value in (("content", content), ("user_id", item.user_id), *(("tags", tag) for tag in tags)):
        if problem := text_problem(value):
            raise ApplicationError(f"{name}: {problem}", code="INVALID_TEXT", details={"field": name})
    if item.scope not in Scope.values:
        raise ApplicationError(f"Unknown scope {item.scope!r}.", code="INVALID_SCOPE", details={"scopes": Scope.values})
    if item.memory_type not in MemoryType.values:
        raise ApplicationError(
            f"Unknown memory_type {item.memory_type!r}.", code="INVALID_MEMORY_TYPE", details={"memory_types": MemoryType.values}
        )


def entry_columns(*, rules: WriteRules, item: MemoryInput, store: Store, now: datetime) -> dict[str, Any]:
    """The stored columns of a new entry from `item` (checked by `entry_checked`, then its
    content kept as the workspace keeps text), but for who writes it and its vector: its
    data checked for its type and kept as text is, a fact's key, its expiry, in review when
    its source is held back, indexed with its tags and `now` in words."""
    data = kept_data(item.memory_type, validate_data(item.memory_type, item.data), rules.kept)
    return {
        "user_id": item.user_id, "scope": item.scope, "memory_type": item.memory_type, "content": item.content, "tags": item.tags,
        "metadata": item.metadata, "data": data, "store": store,
        "fact_key": fact_key(item.memory_type, data, multi=rules.multi()) if item.memory_type == MemoryType.FACTUAL else None,
        "expires_at": expiry_of(item.memory_type, item.ttl_seconds, item.expires_at, now, rules.working_ttl),
        "search_extra": search_extra_text(item.tags, now),
        "review": Review.QUARANTINED if held_back(rules=rules, source_kinds=(item.source.kind,)) else Review.UNREVIEWED,
        **item.source.columns(),
    }


def store_resolved(agent: Agent, name: str | None, stores: list[Store]) -> Store:
    if name is None:
        if len(stores) == 1:
            return stores[0]
        default = next((s for s in stores if s.name == "default"), None)
        if default is not None:
            return default
        raise ApplicationError(
            "This agent is attached to several stores: say which one in `store`.",
            code="STORE_REQUIRED",
            details={"stores": [s.name for s in stores]},
        )
    store = next((s for s in stores if s.name == name), None)
    if store is None:
        # A store the agent is not attached to cannot be written, whether or not it exists.
        raise ApplicationError(
            f"This agent is not attached to a store named {name!r}.", code="STORE_NOT_ATTACHED", details={"store": name}
        )
    return store


def expiry_of(
    memory_type: str, ttl_seconds: int | None, expires_at: datetime | None, now: datetime, working_ttl: Callable[[], timedelta]
) -> datetime | None:
    """`working_ttl` is asked only for a working memory given no expiry (it reads the
    workspace's retention policy)."""
    if ttl_seconds is not None and expires_at is not None:
        raise ApplicationError("Give ttl_seconds or expires_at, not both.", code="INVALID_EXPIRY")
    if ttl_seconds is not None:
        return now + timedelta(seconds=ttl_seconds)
    if expires_at is not None:
        if expires_at <= now:
            raise ApplicationError("expires_at must be in the future.", code="INVALID_EXPIRY")
        return expires_at
    if memory_type == MemoryType.WORKING:
        return now + working_ttl()
    return None


def vectors_of(contents: list[str], given: list[list[float] | None]) -> tuple[np.ndarray, str, int]:
    """Vectors for every item, as the rows of one float32 matrix (what COPY sends and the
    duplicate lookup compares, converted from lists once): the agent's own where given,
    the model's (one call for the whole batch) elsewhere."""
    provider = get_provider()
    missing = [i for i, vector in enumerate(given) if vector is None]
    computed = provider.embed([contents[i] for i in missing]) if missing else []
    by_index = dict(zip(missing, computed, strict=True))
    vectors = [by_index[i] if vector is None else checked_embedding(vector, provider.dimensions) for i, vector in enumerate(given)]
    return np.asarray(vectors, dtype=np.float32).reshape(len(given), provider.dimensions), provider.model_id, provider.dimensions


def kept_text(workspace: Workspace) -> Callable[[str], str]:
    """Memories as the workspace keeps them; applied before embedding, so what is
    redacted is never in a vector either."""
    return redactor(workspace_id=workspace.pk, enabled=workspace.redact_memories)


def kept_data(memory_type: str, data: dict[str, Any], kept: Callable[[str], str]) -> dict[str, Any]:
    """A fact's names as the workspace keeps text: its content says them again, and the
    graph shows them (docs/graph.md), so they are redacted like the content."""
    if memory_type != MemoryType.FACTUAL:
        return data
    return {**data, **{name: kept(data[name]) for name in ("subject", "predicate", "object") if isinstance(data.get(name), str)}}


def index_soon() -> None:
    tasking.enqueue("memoryhub.memory.tasks.index_vectors")
