from __future__ import annotations

from openapi_spec_validator import OpenAPIV31SpecValidator

from tests.conftest import api_client
from tests.schema_validation import schema_check


def test_it_serves_the_openapi_schema_without_a_key(db: None) -> None:
    response = api_client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert {"/api/v1/me", "/api/v1/keys", "/api/v1/keys/{prefix}"} <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["bearerKey"]["scheme"] == "bearer"


def test_it_serves_the_docs_page(db: None) -> None:
    response = api_client().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def test_it_publishes_a_valid_openapi_document() -> None:
    errors = [error.message for error in OpenAPIV31SpecValidator(schema_check().schema).iter_errors()]
    assert errors == []
