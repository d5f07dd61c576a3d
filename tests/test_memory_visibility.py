"""The visibility rule's two forms (memoryhub/memory/visibility.py) select the same entries:
the queryset every read starts from, and the SQL condition duplicates' statements use."""

from __future__ import annotations

import itertools
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from memoryhub.core.models import Agent
from memoryhub.core.selectors import Principal, principal_for_key
from memoryhub.memory.models import MemoryEntry, Review, Scope
from memoryhub.memory.visibility import current_visible_params, current_visible_sql, visible_entries
from tests.conftest import Actors


def _principal(key: str) -> Principal:
    principal = principal_for_key(plaintext=key)
    assert principal is not None
    return principal


def _through_sql(agent: Agent) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT e.id FROM memory_memoryentry e WHERE {current_visible_sql('e')}",
            current_visible_params(agent=agent, stores=agent.stores.all()),
        )
        return {str(pk) for (pk,) in cursor.fetchall()}


def test_the_queryset_and_the_sql_see_the_same_entries(actors: Actors) -> None:
    now = timezone.now()
    owners = [actors.bot, actors.peer, actors.loner]
    ways = itertools.product(
        Scope.values, owners, Review.values, (None, now - timedelta(minutes=1), now + timedelta(days=1)), (None, now - timedelta(seconds=5)),
    )
    for n, (scope, owner, review, expires_at, invalidated_at) in enumerate(ways):
        MemoryEntry.objects.create(
            workspace=actors.workspace, store=owner.stores.first(), agent=owner, user_id="u1", scope=scope, content=f"entry {n}",
            review=review, expires_at=expires_at, invalidated_at=invalidated_at,
        )
    # Another workspace's global entries are no agent's here.
    MemoryEntry.objects.create(
        workspace=actors.foreign_workspace, store=actors.spy.stores.first(), agent=actors.spy, user_id="u1", scope=Scope.GLOBAL, content="theirs",
    )
    for agent, key in ((actors.bot, actors.bot_key), (actors.peer, actors.peer_key), (actors.loner, actors.loner_key), (actors.spy, actors.spy_key)):
        by_queryset = {str(pk) for pk in visible_entries(_principal(key)).current().values_list("pk", flat=True)}
        assert by_queryset == _through_sql(agent), agent.name
        assert by_queryset, agent.name  # each sees something: the comparison is not of two empty sets
