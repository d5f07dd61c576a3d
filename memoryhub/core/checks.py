"""System checks that keep the purge path complete as models are added."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core import checks
from django.db import models

from memoryhub.core.registry import own_models, user_field


def models_missing_user_id(candidates: Iterable[type[models.Model]]) -> list[type[models.Model]]:
    """Models with neither a `user_id` (or `user_ids`) field nor a written `user_id_exemption`."""
    missing = []
    for model in candidates:
        exemption = getattr(model, "user_id_exemption", "")
        if user_field(model) is None and not (isinstance(exemption, str) and exemption.strip()):
            missing.append(model)
    return missing


@checks.register(checks.Tags.models)
def user_id_coverage(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    return [
        checks.Error(
            f"{model._meta.label} has no user_id field.",
            hint="Inherit memoryhub.core.models.MemoryRecord, or set user_id_exemption to a sentence "
            "saying why this model can never hold data about an end user.",
            obj=model,
            id="memoryhub.E001",
        )
        for model in models_missing_user_id(own_models())
    ]


@checks.register(checks.Tags.security, deploy=False)
def pseudonym_key_apart(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A backup carries the pseudonym key; were it the secret key, the backup would sign
    console sessions."""
    if settings.SECRET_KEY != settings.MEMORYHUB_PSEUDONYM_KEY:
        return []
    return [checks.Error(
        "MEMORYHUB_SECRET_KEY is the pseudonym key: every backup carries the pseudonym key, so it would carry the secret key too.",
        hint="Set MEMORYHUB_SECRET_KEY to a new random value (operators log in again); never change the pseudonym key.",
        id="memoryhub.E002",
    )]
