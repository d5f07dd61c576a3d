"""The registry of models that hold data about end users.

Found by walking the installed apps rather than listed by hand, so a new model is
covered by the purge, the write fence and the user_id check without anyone remembering
to add it (docs/compliance.md: every record carries the user_id it is about). A record is about
one user (a `user_id` field) or, rarely, several (a `user_ids` array: a stored answer
that quotes several users' memories); `user_rows` and `user_condition_sql` hide which."""

from __future__ import annotations

from django.apps import apps
from django.db import models
from django.db.models import QuerySet

USER_FIELDS = ("user_id", "user_ids")

# Apps whose models we own; third-party models (auth, sessions, axes…) are not ours to tag.
OWN_APP_PREFIXES = ("memoryhub.", "agents_api")


def own_models() -> list[type[models.Model]]:
    return [
        model
        for config in apps.get_app_configs()
        if config.name.startswith(OWN_APP_PREFIXES)
        for model in config.get_models()
    ]


def user_models() -> list[type[models.Model]]:
    """Every model of ours that holds a user_id, children before parents (a message
    before its session), so each is counted before a cascade could remove it."""
    found = [m for m in own_models() if user_field(m) is not None and not m._meta.abstract]

    def depth(model: type[models.Model]) -> int:
        parents = [
            f.related_model for f in model._meta.get_fields()
            if (f.many_to_one or (f.one_to_one and f.concrete)) and f.related_model in found and f.related_model is not model
        ]
        return 1 + max((depth(p) for p in parents), default=0)

    return sorted(found, key=depth, reverse=True)


def user_field(model: type[models.Model]) -> str | None:
    """The field naming the end user(s) a row is about, if the model has one."""
    names = {field.name for field in model._meta.get_fields()}
    return next((name for name in USER_FIELDS if name in names), None)


def user_rows(model: type[models.Model], *, workspace_id: int, user_id: str) -> QuerySet:
    """The rows of `model` about `user_id` in a workspace."""
    lookup = {"user_ids__contains": [user_id]} if user_field(model) == "user_ids" else {"user_id": user_id}
    return model._default_manager.filter(workspace_id=workspace_id, **lookup)


def user_condition_sql(model: type[models.Model]) -> str:
    """The SQL condition (one %s: the user_id) of `user_rows`, for raw batches."""
    if user_field(model) == "user_ids":
        return '"user_ids" @> ARRAY[%s]::varchar[]'
    return '"user_id" = %s'
