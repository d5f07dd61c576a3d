from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from memoryhub.core.limits import json_size_problem
from memoryhub.core.models import USER_ID_MAX_LENGTH, validate_user_id

# The longest time to live an entry may ask for (ten years).
MAX_TTL_SECONDS = 10 * 365 * 86400


class StrictInputSerializer(serializers.Serializer):
    """Input serializer that refuses fields it does not know: a typo in a field name
    must be an error the agent sees, not a setting silently ignored."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def json_size_ok(value: Any) -> Any:
    if problem := json_size_problem(value):
        raise serializers.ValidationError(problem)
    return value


class UserIdField(serializers.CharField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=USER_ID_MAX_LENGTH, validators=[validate_user_id], **kwargs)


# Identifiers clients choose (session_id, call_id, step_id, labels): docs/api.md,
# "Identifiers". Safe in URLs and on the console's pages as they are. (`(?!\n)`: in
# Python, `$` also matches before a final newline; the schema's regex engine agrees.)
IDENTIFIER_PATTERN = r"^[A-Za-z0-9\-_.:@]+(?!\n)$"
IDENTIFIER_MAX_LENGTH = 200
# The largest values the database's integer columns hold (positive int and bigint).
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of turning them into text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class IdentifierField(StrictCharField):
    """A client-chosen identifier: letters, digits and -_.:@, up to 200 characters."""

    default_error_messages = {"invalid": "Use letters, digits and -_.:@ only."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", IDENTIFIER_MAX_LENGTH)
        kwargs.setdefault("trim_whitespace", False)  # " s1" is refused, not quietly made "s1"
        super().__init__(**kwargs)
        # `*` where blank is allowed (a label left out), so the schema's pattern admits "" too.
        pattern = IDENTIFIER_PATTERN.replace("]+", "]*") if self.allow_blank else IDENTIFIER_PATTERN
        self.validators.append(RegexValidator(pattern, message=self.error_messages["invalid"], code="invalid"))


def validated(serializer_class: type[serializers.Serializer], data: Any) -> serializers.Serializer:
    """The serializer, validated: a 400 in the error envelope otherwise."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer


def int_param(request: Any, name: str, default: int | None, *, low: int | None = None, high: int | None = None) -> int | None:
    """An integer query parameter, clamped to [low, high]; 400 if it is not a number."""
    from memoryhub.core.errors import ApplicationError

    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApplicationError(f"{name} must be a number.", code="VALIDATION_ERROR") from None
    if low is not None:
        value = max(low, value)
    if high is not None:
        value = min(high, value)
    return value
