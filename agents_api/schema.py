"""The error answers of the OpenAPI schema, added to every operation at once.

Every error is the one envelope of docs/api.md, "Errors"; which statuses an operation
can answer follows from its method, its body and, for the few statuses only some
operations give, the tables below. A drf-spectacular postprocessing hook
(SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) rather than `responses` on each view:
the same eleven statuses would otherwise be repeated on forty-odd operations.
"""

from __future__ import annotations

from typing import Any

ENVELOPE = "ErrorEnvelope"

ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every error of the API (docs/api.md, \"Errors\").",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "Stable, e.g. VALIDATION_ERROR, VERSION_CONFLICT."},
                "message": {"type": "string", "description": "For people; may change."},
                "details": {
                    "type": "object",
                    "additionalProperties": {},
                    "description": "Depends on the code, e.g. `fields` (per-field messages) or `current_version`.",
                },
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}

# Status → (name of the response component, description).
ERRORS: dict[int, tuple[str, str]] = {
    400: ("BadRequest", "Invalid input: malformed JSON, wrong types or unknown fields (`details.fields`), a bad query parameter."),
    401: ("Unauthenticated", "No key, or an invalid, expired or revoked one, or a key in the query string."),
    403: ("Forbidden", "The key may not do this: an agent key or an operator role is needed, or the user is blocked (`USER_PURGED`)."),
    404: ("NotFound", "No such object, or one the caller may not see."),
    409: ("Conflict", "A stale version, an invalid transition, a busy Idempotency-Key, or a purge of the user in progress (with `Retry-After`)."),
    410: ("Gone", "The tool output was removed by the workspace's retention policy (`TOOL_OUTPUT_EXPIRED`)."),
    413: ("PayloadTooLarge", "The body, a checkpoint's or a session's state or a tool output is larger than its limit (`details.limit_bytes`)."),
    415: ("UnsupportedMediaType", "The body is not JSON."),
    422: ("IdempotencyKeyReused", "This Idempotency-Key came with another request (`IDEMPOTENCY_KEY_REUSED`)."),
    429: ("RateLimited", "Too many requests: retry after `Retry-After` seconds."),
    503: ("ServiceUnavailable", "PostgreSQL or Redis is unreachable (`SERVICE_UNAVAILABLE`, with `Retry-After`); the request's database work "
          "passed the hub's time limit (`QUERY_TIMEOUT`); or the embedding model or the summariser did not answer "
          "(`EMBEDDINGS_UNAVAILABLE`, `SUMMARIZER_UNAVAILABLE`; nothing changed)."),
}


def _retry_after(required: bool) -> dict[str, Any]:
    return {"Retry-After": {"description": "Seconds to wait before retrying.", "required": required, "schema": {"type": "integer"}}}


HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "`Bearer realm=\"memoryhub\"`", "required": True, "schema": {"type": "string"}}},
    409: _retry_after(required=False),
    429: _retry_after(required=True),
}

# 503: any request can meet an outage or its statements' time limit (memoryhub/serving).
EVERY_OPERATION = frozenset({400, 401, 403, 404, 429, 503})
WRITES = frozenset({"post", "put", "patch", "delete"})

# Statuses only some operations answer with, by operationId (these ids are kept stable).
ONLY_SOME: dict[int, frozenset[str]] = {
    410: frozenset({"v1_tool_calls_result_retrieve"}),
    409: frozenset({"v1_exports_download_retrieve"}),  # the export is not finished yet
}


def statuses_of(method: str, operation: dict[str, Any]) -> set[int]:
    statuses = set(EVERY_OPERATION)
    if method in WRITES:
        statuses.add(409)  # the purge fence refuses any write about a user being erased
    if "requestBody" in operation:
        statuses |= {413, 415}
    if method == "post":
        statuses.add(422)  # every POST takes an Idempotency-Key
    statuses |= {status for status, operation_ids in ONLY_SOME.items() if operation["operationId"] in operation_ids}
    return statuses


def error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the ErrorEnvelope component, one response
    component per error status, and each operation's error statuses (a status a view
    declares itself is left as it is)."""
    components = result.setdefault("components", {})
    components.setdefault("schemas", {})[ENVELOPE] = ENVELOPE_SCHEMA
    responses = components.setdefault("responses", {})
    for status, (name, description) in ERRORS.items():
        responses[name] = {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ENVELOPE}"}}},
            **({"headers": HEADERS[status]} if status in HEADERS else {}),
        }
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status in sorted(statuses_of(method, operation)):
                operation["responses"].setdefault(str(status), {"$ref": f"#/components/responses/{ERRORS[status][0]}"})
    return result
