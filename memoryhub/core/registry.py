"""The registry of models that hold data about end users.

Found by walking the installed apps rather than listed by hand, so a new model is
covered by the purge, the write fence and the user_id check without anyone remembering
to add it (DESIGN.md: every record carries the user_id it is about)."""

from __future__ import annotations

from django.apps import apps
from django.db import models

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
    found = [m for m in own_models() if "user_id" in {f.name for f in m._meta.get_fields()} and not m._meta.abstract]

    def depth(model: type[models.Model]) -> int:
        parents = [
            f.related_model for f in model._meta.get_fields()
            if (f.many_to_one or (f.one_to_one and f.concrete)) and f.related_model in found and f.related_model is not model
        ]
        return 1 + max((depth(p) for p in parents), default=0)

    return sorted(found, key=depth, reverse=True)
