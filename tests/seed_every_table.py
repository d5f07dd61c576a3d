"""A row in every table of the hub, made from the models alone.

Used by the backup and upgrade tests: the upgrade test runs this very file with an
older release's code (`python tests/seed_every_table.py` with that tree first on
PYTHONPATH), so it relies on nothing but Django's model metadata: whatever models that
release had get one row each, with every column filled (vectors included).
Run as a script it seeds the database of DJANGO_SETTINGS_MODULE and prints
{table: rows} as JSON; with --read it reads every row through the ORM instead.
"""

from __future__ import annotations

import datetime
import json
import uuid
from typing import Any

SEED_USER = "seed-user"
_BUSY = object()


def _value(model: Any, field: Any, made: dict[Any, Any]) -> Any:
    from django.db import models
    from django.utils import timezone

    if field.is_relation:
        target = field.related_model._meta.concrete_model
        if made.get(target) is _BUSY or target is model:
            return None  # a cycle (a fork's parent, a superseded fact): nullable by design
        return _row(target, made)
    if field.name == "user_id":
        return SEED_USER
    if field.choices:
        return field.choices[0][0]
    kind = field.get_internal_type()
    if kind == "VectorField" or type(field).__name__ == "VectorField":
        dims = getattr(field, "dimensions", None) or 384
        return [((i * 7) % 13) / 13.0 + 0.01 for i in range(dims)]
    if kind == "ArrayField":
        return [_value(model, field.base_field, made)] if field.base_field.choices is None else [field.base_field.choices[0][0]]
    if field.has_default() and kind in {"JSONField", "UUIDField"}:
        return field.get_default()
    if kind == "JSONField":
        return {"seed": True}
    if kind in {"CharField", "TextField", "SlugField"}:
        text = f"seed-{model._meta.model_name}-{field.name}"
        return text[: field.max_length] if field.max_length else text
    if kind == "EmailField":
        return "seed@example.com"
    if kind in {"BinaryField"}:
        return b"seed-bytes"
    if kind == "BooleanField":
        return field.get_default() if field.has_default() else False
    if kind in {"IntegerField", "BigIntegerField", "PositiveIntegerField", "PositiveSmallIntegerField", "SmallIntegerField", "PositiveBigIntegerField"}:
        return field.get_default() if field.has_default() and field.get_default() is not None else 1
    if kind == "FloatField":
        return 0.5
    if kind == "DateTimeField":
        return timezone.now()
    if kind == "DateField":
        return datetime.date.today()
    if kind == "DurationField":
        return datetime.timedelta(seconds=1)
    if kind == "UUIDField":
        return uuid.uuid4()
    if kind == "GenericIPAddressField":
        return "127.0.0.1"
    if isinstance(field, models.Field) and field.has_default():
        return field.get_default()
    return None


def _row(model: Any, made: dict[Any, Any]) -> Any:
    model = model._meta.concrete_model
    if model in made and made[model] is not _BUSY:
        return made[model]
    existing = model._default_manager.first()
    if existing is not None:
        made[model] = existing
        return existing
    made[model] = _BUSY
    if model._meta.label == "auth.User":
        made[model] = model.objects.create_user(username="seed-operator", password="seed-password-long-enough")
        return _related(model, made)
    values = {}
    for field in model._meta.concrete_fields:
        if field.primary_key and field.get_internal_type() in {"AutoField", "BigAutoField", "SmallAutoField"}:
            continue
        if getattr(field, "generated", False):
            continue
        if field.is_relation:
            values[field.name] = _value(model, field, made)
        else:
            values[field.attname] = _value(model, field, made)
    made[model] = model._default_manager.create(**values)
    return _related(model, made)


def _related(model: Any, made: dict[Any, Any]) -> Any:
    for m2m in model._meta.local_many_to_many:
        if m2m.remote_field.through._meta.auto_created:
            getattr(made[model], m2m.name).add(_row(m2m.related_model, made))
    return made[model]


def seed() -> dict[str, int]:
    """One row (at least) in every table of the hub's apps; returns rows per table."""
    from django.apps import apps
    from django.db import connection, transaction

    made: dict[Any, Any] = {}
    with transaction.atomic():
        for model in apps.get_models(include_auto_created=False):
            if not model._meta.proxy and model._meta.managed:
                _row(model, made)
    return table_counts(connection)


def table_counts(connection: Any) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        tables = [row[0] for row in cursor.fetchall()]
        counts = {}
        for table in tables:
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
    return counts


def read_all() -> dict[str, int]:
    """Every row of every model read through the ORM (all columns, vectors included):
    proves this code can load what is there. Returns rows per table."""
    from django.apps import apps

    read = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.managed and not model._meta.proxy:
            read[model._meta.db_table] = len(list(model._default_manager.all()))
    return read


if __name__ == "__main__":
    import os
    import sys

    import django

    sys.path.insert(0, os.getcwd())  # the tree to seed with: run from its root
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

    django.setup()
    print(json.dumps(read_all() if sys.argv[1:] == ["--read"] else seed()))
