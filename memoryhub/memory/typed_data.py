"""What `data` must hold for each memory type."""

from __future__ import annotations

import hashlib
from typing import Any

from memoryhub.core.errors import ApplicationError
from memoryhub.memory.models import MemoryType

MAX_DATA_STRING = 2000
FACT_KEY_MAX_LENGTH = 600
MAX_DATA_LIST = 200


def _string(data: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _invalid(name, "must be a non-empty string")
    if len(value) > MAX_DATA_STRING:
        raise _invalid(name, f"must be at most {MAX_DATA_STRING} characters")
    return value


def _strings(data: dict[str, Any], name: str, *, required: bool) -> list[str]:
    value = data.get(name)
    if value is None:
        if required:
            raise _invalid(name, "is required (a list of strings)")
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise _invalid(name, "must be a list of non-empty strings")
    if required and not value:
        raise _invalid(name, "must not be empty")
    if len(value) > MAX_DATA_LIST:
        raise _invalid(name, f"must have at most {MAX_DATA_LIST} items")
    return value


def _invalid(name: str, problem: str) -> ApplicationError:
    return ApplicationError(f"data.{name} {problem}.", code="INVALID_DATA", details={"field": f"data.{name}"})


def _only(data: dict[str, Any], allowed: set[str], memory_type: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ApplicationError(
            f"Unknown field(s) in data for a {memory_type} memory: {', '.join(unknown)}.",
            code="INVALID_DATA",
            details={"unknown": unknown, "allowed": sorted(allowed)},
        )


def validate_data(memory_type: str, data: Any) -> dict[str, Any]:
    """The normalised `data` for `memory_type`, or ApplicationError (400 INVALID_DATA)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ApplicationError("data must be a JSON object.", code="INVALID_DATA", details={"field": "data"})
    if memory_type == MemoryType.FACTUAL:
        _only(data, {"subject", "predicate", "object", "confidence"}, memory_type)
        confidence = data.get("confidence", 1.0)
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
            raise _invalid("confidence", "must be a number from 0 to 1")
        obj = data.get("object")
        if obj is None or (isinstance(obj, str) and not obj.strip()):
            raise _invalid("object", "is required")
        if not isinstance(obj, (str, int, float, bool)):
            raise _invalid("object", "must be a string, a number or a boolean")
        if isinstance(obj, str) and len(obj) > MAX_DATA_STRING:
            raise _invalid("object", f"must be at most {MAX_DATA_STRING} characters")
        return {"subject": _string(data, "subject"), "predicate": _string(data, "predicate"), "object": obj, "confidence": float(confidence)}
    if memory_type == MemoryType.PROCEDURAL:
        _only(data, {"task", "steps", "preconditions"}, memory_type)
        return {
            "task": _string(data, "task"),
            "steps": _strings(data, "steps", required=True),
            "preconditions": _strings(data, "preconditions", required=False),
        }
    if memory_type == MemoryType.SEMANTIC:
        _only(data, {"concept", "category", "related_concepts"}, memory_type)
        return {
            "concept": _string(data, "concept"),
            "category": _string(data, "category", required=False) or "",
            "related_concepts": _strings(data, "related_concepts", required=False),
        }
    return data


FACT_KEY_SEPARATOR = "\x1f"
# A fact key too long for its column is kept as this prefix and a digest of the key.
FACT_KEY_DIGEST_PREFIX = "sha256:"


def fact_folded(text: object) -> str:
    """A fact's subject or predicate as facts are compared: case and spacing folded."""
    return " ".join(str(text).casefold().split())


def entity_folded(text: object) -> str:
    """A name as the graph matches names: the SQL function graph_entity() (migration memory
    0012) lower-cases it and folds runs of space. Python's lower() is Unicode's simple case
    mapping, as PostgreSQL's lower() is under the embedded database's C.UTF-8 ctype, so the
    two agree ("Straße" stays "straße", where casefold() would make it "strasse")."""
    return " ".join(str(text).lower().split())


def fact_key(memory_type: str, data: dict[str, Any], *, multi: frozenset[str] = frozenset()) -> str | None:
    """What makes two facts "the same fact": subject and predicate, case and spacing
    folded ("Alice"/"lives in" and "alice"/"Lives  in" are one fact), and the object too
    for a predicate in `multi` (whose objects stand side by side: PredicateKind.MULTI)."""
    if memory_type != MemoryType.FACTUAL:
        return None
    key = f"{fact_folded(data['subject'])}{FACT_KEY_SEPARATOR}{fact_folded(data['predicate'])}"
    if entity_folded(data["predicate"]) in multi:
        key += f"{FACT_KEY_SEPARATOR}{fact_folded(data['object'])}"
    # The column (and its unique index) holds 600 characters; a longer pair is kept by
    # its digest, which is as unique and as stable.
    return key if len(key) <= FACT_KEY_MAX_LENGTH else FACT_KEY_DIGEST_PREFIX + hashlib.sha256(key.encode()).hexdigest()
