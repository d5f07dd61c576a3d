"""The tools' argument types: the REST serializers' limits, as JSON Schema the agent can
read, checked by pydantic before any of the hub runs."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from memoryhub.core.errors import ApplicationError
from memoryhub.core.limits import json_size_problem
from memoryhub.core.models import validate_user_id
from memoryhub.core.text import text_problem
from memoryhub.memory.services import Source


def _user_id_checked(value: str) -> str:
    try:
        validate_user_id(value)
    except DjangoValidationError as error:
        raise ValueError(error.messages[0]) from None
    return value


def _json_size_checked(value: dict[str, Any]) -> dict[str, Any]:
    if problem := json_size_problem(value):
        raise ValueError(problem)
    return value


Json = dict[str, Any]
# A JSON object the agent attaches (metadata, data): at most MAX_JSON_BYTES, as over REST.
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_size_checked)]

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9\-_.:@]+$", max_length=200, description="letters, digits and -_.:@")]
UserId = Annotated[str, Field(min_length=1, max_length=255, description="the end user this is about"), AfterValidator(_user_id_checked)]
Content = Annotated[str, Field(min_length=1, max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS)]
Text = Annotated[str, Field(min_length=1, max_length=4000)]
Tags = Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=64)]
Ttl = Annotated[int, Field(ge=1, le=10 * 365 * 86400, description="seconds until the memory is deleted")]
StoreName = Annotated[str, Field(min_length=1, max_length=64, description="one of the agent's stores; its only or `default` store if omitted")]
MemoryScope = Literal["agent", "shared", "global"]
AnyMemoryType = Literal["note", "factual", "episodic", "semantic", "procedural", "working"]
SearchMode = Literal["hybrid", "semantic", "keyword"]
ToolStatus = Literal["ok", "error"]
StepState = Literal["pending", "running", "done", "failed"]
DecisionName = Literal["approve", "edit", "reject", "suspend"]
Outcome = Literal["success", "failure", "handoff"]
CheckpointPart = Literal["state", "messages", "plan", "summary"]
Version = Annotated[int, Field(ge=0, le=2**31 - 2)]
MemoryId = Annotated[str, Field(min_length=1, max_length=64, description="a memory's id")]
Entity = Annotated[str, Field(min_length=1, max_length=2000, description="an entity's name (case and spacing ignored)")]


class SourceArg(BaseModel):
    """What a memory came from: {session_id, seq}, {session_id, call_id} or {episode_id}."""

    model_config = ConfigDict(extra="forbid")

    session_id: Identifier | None = None
    seq: Annotated[int, Field(ge=1, le=2**63 - 1)] | None = None
    call_id: Identifier | None = None
    episode_id: Annotated[int, Field(ge=1, le=2**63 - 1)] | None = None

    @model_validator(mode="after")
    def _names_one_thing(self) -> SourceArg:
        # The domain's rule, refused with the other argument errors, before anything runs.
        try:
            self.source()
        except ApplicationError as error:
            raise ValueError(error.message) from None
        return self

    def source(self) -> Source:
        return Source.named(**self.model_dump(exclude_none=True))


class PlanStepArg(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step_id: Identifier
    description: Text
    depends_on: Annotated[list[Identifier], Field(max_length=100)] = []
    parent: Identifier | None = None


def stored_text_problem(value: Any, path: str = "") -> str | None:
    """The first text among the arguments the database could not store: a tool error up
    front, as the REST API's 400, instead of a failed statement."""
    if isinstance(value, str):
        problem = text_problem(value)
        return f"{problem} (in {path or 'an argument'})" if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            if problem := stored_text_problem(key, path) or stored_text_problem(item, f"{path}.{key}" if path else str(key)):
                return problem
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if problem := stored_text_problem(item, f"{path}[{index}]"):
                return problem
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a domain input built from the arguments
        return stored_text_problem({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, path)
    return None


def unique(tags: list[str] | None) -> list[str]:
    return list(dict.fromkeys(tags or []))
