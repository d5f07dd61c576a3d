"""Every /api/v1/ answer the tests get is checked against the OpenAPI schema.

`api_client()` (conftest) returns a `SchemaCheckedClient`: each response must have a
status its operation declares and a body that matches that status's schema, by
openapi-core against the schema drf-spectacular generates (once per test session).
A mismatch fails the test, naming the operation, the status and the error.

The check is stricter than the published schema in one way: an object that lists its
properties may have no others (`additionalProperties: false`), so a field a view adds
without declaring it fails too. The published schema stays open, so that clients
generated from it accept the fields later versions add (docs/api.md: the API is extended, never
broken).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from django.http import HttpResponseBase
from django.urls import Resolver404, resolve
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from openapi_core import Config, OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIResponse
from openapi_core.testing import MockRequest
from rest_framework.test import APIClient

API_PREFIX = "/api/v1/"
# Django's path converters (`<str:session_id>`) → OpenAPI's templates (`{session_id}`).
CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")
# What a test may send to a path or method the API does not have.
NO_SUCH_OPERATION = frozenset({404, 405})


def closed(node: Any) -> Any:
    """The schema with `additionalProperties: false` on every object that lists its
    properties and says nothing about others."""
    if isinstance(node, dict):
        node = {key: closed(value) for key, value in node.items()}
        if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
            node["additionalProperties"] = False
        return node
    if isinstance(node, list):
        return [closed(item) for item in node]
    return node


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    template: str


class SchemaCheck:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = closed(schema)
        # The document itself is checked by its own test (test_schema.py): a flaw in
        # an input's description is one failure there, not one in every API test.
        self.openapi = OpenAPI.from_dict(self.schema, config=Config(spec_validator_cls=None))

    def operation(self, method: str, path: str) -> Operation | None:
        """The schema's operation for a request, found by the URL pattern Django routes
        it to (so `/memories/batch` is never taken for `/memories/{entry_id}`)."""
        try:
            route = resolve(path).route
        except Resolver404:
            return None
        template = "/" + CONVERTER.sub(r"{\1}", route)
        operation = self.schema["paths"].get(template, {}).get(method.lower())
        return Operation(operation["operationId"], method.upper(), template) if operation else None

    def problems(self, *, method: str, path: str, response: HttpResponseBase) -> str | None:
        """What is wrong with `response` to `method path`, or None."""
        if not path.startswith(API_PREFIX) or response.streaming:  # the SSE stream is checked by its own tests
            return None
        operation = self.operation(method, path)
        if operation is None:
            if response.status_code in NO_SUCH_OPERATION:
                return None
            return f"{method.upper()} {path} answered {response.status_code}, but the schema has no such operation"
        request = MockRequest("http://testserver", operation.method, path, path_pattern=operation.template)
        errors = list(self.openapi.iter_response_errors(request, DjangoOpenAPIResponse(response)))
        if not errors:
            return None
        return (
            f"{operation.id} ({operation.method} {operation.template}) answered {response.status_code}, "
            f"which breaks its schema:\n" + "\n".join(describe(error) for error in errors)
            + f"\nbody: {response.content[:2000]!r}"
        )

    def check(self, *, method: str, path: str, response: HttpResponseBase) -> None:
        problem = self.problems(method=method, path=path, response=response)
        if problem:
            # pytest.fail, not an AssertionError: a test's `pytest.raises(Exception)` must not swallow it.
            pytest.fail(problem, pytrace=False)


def describe(error: Exception) -> str:
    """openapi-core's error with the schema errors behind it, one line each."""
    causes = getattr(error.__cause__, "schema_errors", None) or ()
    lines = [f"  {type(error).__name__}: {error.__cause__ or error}"]
    lines += [f"    at {'/'.join(map(str, cause.absolute_path)) or '(body)'}: {cause.message}" for cause in causes]
    return "\n".join(lines)


_lock = threading.Lock()
_check: SchemaCheck | None = None


def schema_check() -> SchemaCheck:
    """The check against the schema of this code, generated on first use (threads of a
    concurrency test may ask at once)."""
    global _check
    with _lock:
        if _check is None:
            generated = SchemaGenerator().get_schema(request=None, public=True)
            _check = SchemaCheck(json.loads(OpenApiJsonRenderer().render(generated)))
        return _check


# What BaseHandler.load_middleware sets on a handler.
MIDDLEWARE_STATE = ("_view_middleware", "_template_response_middleware", "_exception_middleware", "_middleware_chain")


class SchemaCheckedClient(APIClient):
    """An APIClient whose every /api/v1/ answer must match the OpenAPI schema.

    Its clients share one loaded middleware chain: loading it builds WhiteNoise's index
    of every static file (~850 stat calls), and tests that race many clients (800 in
    the checkpoint race) would spend minutes doing only that. Middleware is shared by
    all requests and threads in production too."""

    _middleware: dict[str, Any] | None = None
    _middleware_lock = threading.Lock()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with SchemaCheckedClient._middleware_lock:
            if SchemaCheckedClient._middleware is None:
                self.handler.load_middleware()
                SchemaCheckedClient._middleware = {name: getattr(self.handler, name) for name in MIDDLEWARE_STATE}
        for name, value in SchemaCheckedClient._middleware.items():
            setattr(self.handler, name, value)

    def request(self, **kwargs: Any) -> HttpResponseBase:
        response = super().request(**kwargs)
        schema_check().check(method=kwargs["REQUEST_METHOD"], path=kwargs["PATH_INFO"], response=response)
        return response
