from __future__ import annotations

from typing import Any

from rest_framework import serializers


class StrictInputSerializer(serializers.Serializer):
    """Input serializer that refuses fields it does not know: a typo in a field name
    must be an error the agent sees, not a setting silently ignored."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)
