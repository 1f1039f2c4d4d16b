"""The pet store's OpenAPI spec and secrets, shared by tests/test_openapi_toolset.py
and tests/openapi_agents.py (plain data: importing it builds no toolset)."""

from __future__ import annotations

import copy
from typing import Any

API_KEY = "pet-store-key-0123456789"
TOKEN = "bearer-token-abcdefghijkl"

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pet store", "version": "1.0"},
    "servers": [{"url": "http://127.0.0.1:9/api/"}],  # replaced by the server's own URL
    "security": [{"key": []}],
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}},
        "parameters": {
            "PetId": {"name": "petId", "in": "path", "required": True, "description": "Which pet",
                      "schema": {"type": "integer", "format": "int64"}},
        },
        "schemas": {
            "Owner": {"type": "object", "properties": {
                "first_name": {"type": "string"},
                "age": {"type": ["integer", "null"], "minimum": 0}}},
            "Pet": {"type": "object", "required": ["name"], "properties": {
                "id": {"type": "integer", "format": "int64", "readOnly": True},
                "name": {"type": "string", "description": "The pet's name"},
                "tag": {"type": "STRING", "enum": ["cat", "dog"]},  # upper case: lower-cased, as google-adk
                "owner": {"$ref": "#/components/schemas/Owner"},
                "friends": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}},  # a cycle
        },
    },
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets", "summary": "List the pets",
                "parameters": [
                    {"name": "limit", "in": "query", "description": "At most this many",
                     "schema": {"type": "integer", "maximum": 100, "default": 20}},
                    {"name": "class", "in": "query", "schema": {"type": "string"}},  # a Python keyword
                    {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "The pets"}},
            },
            "post": {
                "operationId": "createPet", "description": "Add a pet to the store",
                "requestBody": {"required": True, "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                "responses": {"201": {"description": "Made"}},
            },
        },
        "/pets/{petId}": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "get": {"operationId": "showPetById", "summary": "One pet", "responses": {"200": {"description": "ok"}}},
            "put": {  # no operationId: named from its path and method
                "summary": "Set the pet's tags",
                "requestBody": {"content": {"application/json": {
                    "schema": {"type": "array", "items": {"type": "string"}}}}},
                "responses": {"200": {"description": "ok"}},
            },
            "delete": {"operationId": "deletePet", "security": [],  # no auth for this one
                       "parameters": [{"name": "petId", "in": "path", "schema": {"type": "string"}}],
                       "responses": {"204": {"description": "Gone"}}},
        },
        "/pets/{petId}/note": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "post": {"operationId": "a_very_long_operation_identifier_that_is_cut_at_sixty_chars_one",
                     "requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}},
                     "responses": {"200": {"description": "The note, as text"}}},
            "patch": {"operationId": "a_very_long_operation_identifier_that_is_cut_at_sixty_chars_two",
                      "responses": {"200": {"description": "ok"}}},
        },
        "/pets/{petId}/photo": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "post": {"operationId": "uploadPhoto", "requestBody": {"content": {"multipart/form-data": {"schema": {
                "type": "object", "properties": {"file": {"type": "string", "format": "binary"},
                                                 "caption": {"type": "string"}, "meta": {"type": "object"}}}}}},
                     "responses": {"200": {"description": "Stored"}}},
        },
        "/boom": {"get": {"operationId": "breakThings", "responses": {"200": {"description": "never"}}}},
    },
}


def spec_at(url: str) -> dict[str, Any]:
    """The pet store's spec, served at ``url``."""
    spec = copy.deepcopy(SPEC)
    spec["servers"] = [{"url": f"{url}/api/"}]
    return spec
