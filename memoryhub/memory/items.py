"""Items: a key-value store over long-term memory, the shape of LangGraph's BaseStore.

An item is a memory entry with a `namespace` (a path of labels) and a `key`, unique per
store; its JSON value is the entry's `data`, and the text it is found by (the `index`
fields of the value, or the whole value's text) its `content`, redacted and embedded
like any memory's. Items belong to the store, not to the agent that wrote them: every
agent attached to the store reads and writes them (scope `shared`). Expiry is the
memories' own (`expires_at`, filtered on every read, swept every minute); `ttl_seconds`
is kept so that a read may extend it again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, Case, F, FloatField, Q, QuerySet, When
from django.db.models.expressions import RawSQL
from django.utils import timezone
from pgvector.django import CosineDistance

from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Agent, Store
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry, Review, Scope
from memoryhub.memory.services.inputs import search_extra_text
from memoryhub.memory.services.rows import index_soon, kept_text, store_resolved, vectors_of
from memoryhub.privacy.services import ensure_not_blocked

# Items whose writer names no end user: a purge cannot reach them by a user_id, so an
# agent storing something about a user should say whom (`user_id`).
DEFAULT_USER_ID = "store"
FILTER_OPERATORS = {"$eq": "=", "$ne": "<>", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
MAX_PATH_DEPTH = 16


def item_store(*, agent: Agent, name: str | None) -> Store:
    """The store an item call is about: the one named (the agent must be attached to
    it), else the agent's only store or its `default`. Any other store is 404, whether
    it exists or not: items are reached through their store, as messages through their
    session."""
    try:
        return store_resolved(agent, name, list(agent.stores.all()))
    except ApplicationError as error:
        if error.code != "STORE_NOT_ATTACHED":
            raise
        raise NotFound(f"No store named {name!r} for this agent.", code="STORE_NOT_FOUND") from None


def _items(store: Store, now: datetime | None = None) -> QuerySet[MemoryEntry]:
    # Quarantined items wait for a person: the LangGraph store's agents never see them.
    return MemoryEntry.objects.filter(workspace_id=store.workspace_id, store=store, namespace__isnull=False).live(now).exclude(
        review=Review.QUARANTINED,
    )


# --- the text an item is found by -------------------------------------------------------------


_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")


def _path_tokens(path: str) -> list[str]:
    """"a.b[0].c", "a[*].b" → tokens; "$" is the whole value."""
    if path in ("$", ""):
        return []
    return [name or index for name, index in _PATH_TOKEN.findall(path)]


def _at_path(value: Any, tokens: list[str]) -> list[Any]:
    if not tokens:
        return [value]
    head, rest = tokens[0], tokens[1:]
    if head == "*":
        return [found for element in value for found in _at_path(element, rest)] if isinstance(value, list) else []
    if isinstance(value, list):
        return _at_path(value[int(head)], rest) if head.isdigit() and int(head) < len(value) else []
    if isinstance(value, dict) and head in value:
        return _at_path(value[head], rest)
    return []


def _leaves(value: Any) -> list[str]:
    """The strings and numbers of a JSON value, in order: what a reader would call its text."""
    if isinstance(value, dict):
        return [text for element in value.values() for text in _leaves(element)]
    if isinstance(value, list):
        return [text for element in value for text in _leaves(element)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def index_text(value: dict[str, Any], index: list[str] | None) -> str:
    """The fields named by `index` (dotted paths, `[n]` and `[*]`), or the whole value."""
    found = [value] if index is None else [hit for path in index for hit in _at_path(value, _path_tokens(path))]
    return "\n".join(text for hit in found for text in _leaves(hit))


# --- writes ---------------------------------------------------------------------------------------


def item_put(
    *, agent: Agent, store: Store, namespace: list[str], key: str, value: dict[str, Any], index: list[str] | bool | None,
    ttl_seconds: int | None, user_id: str | None,
) -> tuple[MemoryEntry, bool]:
    """Create or replace the item (namespace, key) of the store; (entry, created).

    `index`: None for the whole value's text, False to keep the item out of semantic
    search, or the paths of the fields to index."""
    user_id = user_id or DEFAULT_USER_ID
    ensure_not_blocked(workspace_id=agent.workspace_id, user_id=user_id)
    now = timezone.now()
    # What the hub shows and finds by keyword is the indexed text, else the value's own
    # (an entry's content is never blank); only the indexed text is embedded.
    indexed = "" if index is False else index_text(value, None if index is True else index)
    text = kept_text(agent.workspace)(indexed if indexed.strip() else index_text(value, None) or json.dumps(value))
    vector, model_id, dimensions = None, "", None
    if indexed.strip():
        vectors, model_id, dimensions = vectors_of([text], [None])
        vector = vectors[0]
    fields = {
        "workspace_id": agent.workspace_id, "agent": agent, "user_id": user_id, "scope": Scope.SHARED, "content": text,
        "tags": [], "metadata": {}, "data": value, "ttl_seconds": ttl_seconds,
        "expires_at": now + timedelta(seconds=ttl_seconds) if ttl_seconds else None, "embedding": vector,
        "embedding_model": model_id, "embedding_dim": dimensions, "search_extra": search_extra_text([], now),
        "vector_indexed": False, "fact_key": None, "invalidated_at": None,
    }
    for _attempt in range(3):
        try:
            with transaction.atomic():
                existing = MemoryEntry.objects.select_for_update().filter(store=store, namespace=namespace, key=key).first()
                if existing is None:
                    entry = MemoryEntry.objects.create(store=store, namespace=namespace, key=key, created_at=now, **fields)
                    created = True
                else:
                    # An expired row not yet swept is replaced as if it were new.
                    created = existing.expires_at is not None and existing.expires_at <= now
                    for name, field_value in fields.items():
                        setattr(existing, name, field_value)
                    if created:
                        existing.created_at = now
                    existing.version = F("version") + 1
                    existing.save()
                    existing.refresh_from_db()
                    entry = existing
                if vector is not None:
                    index_soon()
                return entry, created
        except IntegrityError:
            continue  # another put of the same item inserted first: the next round updates it
    raise Conflict("Too many concurrent writes of this item; retry.", code="WRITE_CONFLICT")


def item_delete(*, store: Store, namespace: list[str], key: str) -> bool:
    """Whether there was such an item: deleting one that is not there is no error."""
    deleted, _ = MemoryEntry.objects.filter(store=store, namespace=namespace, key=key).delete()
    return bool(deleted)


def _refresh(entries: list[MemoryEntry], now: datetime) -> None:
    """Reads extend the expiry of the live items they return by their own TTL."""
    ids = [e.pk for e in entries if e.ttl_seconds]
    if not ids:
        return
    MemoryEntry.objects.filter(pk__in=ids, expires_at__gt=now).update(
        expires_at=RawSQL("%s + make_interval(secs => ttl_seconds)", [now])
    )
    for entry in entries:
        if entry.ttl_seconds:
            entry.expires_at = now + timedelta(seconds=entry.ttl_seconds)


# --- reads ----------------------------------------------------------------------------------------


def item_get_many(*, store: Store, keys: list[tuple[list[str], str]], refresh_ttl: bool) -> list[MemoryEntry | None]:
    """The items (or None) in the order asked."""
    now = timezone.now()
    wanted = Q(pk__in=[])
    for namespace, key in keys:
        wanted |= Q(namespace=namespace, key=key)
    found = {(tuple(e.namespace), e.key): e for e in _items(store, now).filter(wanted).defer("embedding", "search_vector")}
    if refresh_ttl:
        _refresh(list(found.values()), now)
    return [found.get((tuple(namespace), key)) for namespace, key in keys]


@dataclass
class ItemHit:
    entry: MemoryEntry
    score: float | None


def _path_sql(path: str) -> list[str]:
    tokens = [token for token in _path_tokens(path) if token != "*"]
    if not tokens or len(tokens) > MAX_PATH_DEPTH:
        raise ApplicationError(f"Cannot filter on {path!r}.", code="INVALID_FILTER", details={"field": path})
    return tokens


def _filter_condition(path: str, operator: str, operand: Any) -> RawSQL:
    column = f'"{MemoryEntry._meta.db_table}"."data"'
    tokens = _path_sql(path)
    operand_json = json.dumps(operand)
    if operator == "$eq" and isinstance(operand, dict):
        # An object matches the fields it names (as in LangGraph's InMemoryStore).
        return RawSQL(f"({column} #> %s) @> %s::jsonb", [tokens, operand_json], output_field=BooleanField())
    if operator == "$eq":
        return RawSQL(f"({column} #> %s) = %s::jsonb", [tokens, operand_json], output_field=BooleanField())
    if operator == "$ne":
        # A value without the field is not equal to anything (as in LangGraph's InMemoryStore).
        return RawSQL(f"({column} #> %s) IS DISTINCT FROM %s::jsonb", [tokens, operand_json], output_field=BooleanField())
    if isinstance(operand, (dict, list)) or operand is None:
        raise ApplicationError(f"{operator} compares numbers, strings or booleans.", code="INVALID_FILTER", details={"field": path})
    # Values of another JSON type never match an order comparison (jsonb would order
    # every number before every boolean, say).
    return RawSQL(
        f"(jsonb_typeof({column} #> %s) = jsonb_typeof(%s::jsonb) AND ({column} #> %s) {FILTER_OPERATORS[operator]} %s::jsonb)",
        [tokens, operand_json, tokens, operand_json], output_field=BooleanField(),
    )


def _conditions(filters: dict[str, Any]) -> list[RawSQL]:
    conditions = []
    for path, wanted in filters.items():
        if isinstance(wanted, dict) and any(name.startswith("$") for name in wanted):
            for operator, operand in wanted.items():
                if operator not in FILTER_OPERATORS:
                    raise ApplicationError(
                        f"Unknown filter operator {operator!r}.", code="INVALID_FILTER",
                        details={"field": path, "operators": sorted(FILTER_OPERATORS)},
                    )
                conditions.append(_filter_condition(path, operator, operand))
        else:
            conditions.append(_filter_condition(path, "$eq", wanted))
    return conditions


def _matching(queryset: QuerySet[MemoryEntry], conditions: list[RawSQL]) -> QuerySet[MemoryEntry]:
    for condition in conditions:
        queryset = queryset.filter(condition)
    return queryset


def item_search(
    *, store: Store, namespace_prefix: list[str], query: str | None, filters: dict[str, Any], limit: int, offset: int,
    refresh_ttl: bool,
) -> list[ItemHit]:
    """Items under the prefix matching every filter: by meaning when there is a query
    (items without a vector last, score None), else the most recently updated first."""
    now = timezone.now()
    items = _items(store, now).defer("embedding", "search_vector")
    if namespace_prefix:
        items = items.filter(**{f"namespace__0_{len(namespace_prefix)}": namespace_prefix})
    items = _matching(items, _conditions(filters))
    if query and query.strip():
        provider = get_provider()
        vector = provider.embed_question(query)
        distance = Case(
            When(embedding_model=provider.model_id, embedding_dim=provider.dimensions, then=CosineDistance("embedding", vector)),
            default=None, output_field=FloatField(),
        )
        items = items.annotate(distance=distance).order_by(F("distance").asc(nulls_last=True), "-updated_at", "pk")
    else:
        items = items.order_by("-updated_at", "pk")
    page = list(items[offset : offset + limit])
    if refresh_ttl:
        _refresh(page, now)
    return [ItemHit(e, None if getattr(e, "distance", None) is None else 1 - e.distance) for e in page]


def item_namespaces(
    *, store: Store, prefix: list[str], suffix: list[str], max_depth: int | None, limit: int, offset: int,
) -> list[list[str]]:
    """The namespaces holding live items, cut at `max_depth`, sorted (labels compared
    byte by byte); `*` in the prefix or suffix stands for any one label."""
    conditions, params = [], []
    for position, label in enumerate(prefix, start=1):
        if label != "*":
            conditions.append(f"namespace[{position}] = %s")
            params.append(label)
    for position, label in enumerate(reversed(suffix)):
        if label != "*":
            conditions.append(f"namespace[cardinality(namespace) - {position}] = %s")
            params.append(label)
    if prefix or suffix:
        conditions.append("cardinality(namespace) >= %s")
        params.append(max(len(prefix), len(suffix)))
    shown = "namespace[1:%s]" if max_depth else "namespace"
    sql = f"""
        SELECT DISTINCT ({shown})::text[] COLLATE "C" AS ns FROM {MemoryEntry._meta.db_table}
        WHERE workspace_id = %s AND store_id = %s AND namespace IS NOT NULL AND (expires_at IS NULL OR expires_at > %s)
        {"".join(f" AND {c}" for c in conditions)}
        ORDER BY ns LIMIT %s OFFSET %s
    """
    arguments = [*([max_depth] if max_depth else []), store.workspace_id, store.pk, timezone.now(), *params, limit, offset]
    with connection.cursor() as cursor:
        cursor.execute(sql, arguments)
        return [list(row[0]) for row in cursor.fetchall()]
