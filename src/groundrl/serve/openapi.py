"""The OpenAPI description of the reward server's routes: the request bodies the routes
really read (they parse raw JSON themselves, for their own 400/413/422 rules) and every
status code they answer. Served at ``/openapi.json`` and ``/docs`` only when the server is
started with ``docs=True`` (``groundrl serve --docs``); off by default."""

from __future__ import annotations

from typing import Any

from fastapi.responses import PlainTextResponse

_ERROR = {
    "description": "",
    "content": {
        "application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}}}}
    },
}


def _err(description: str) -> dict[str, Any]:
    return {**_ERROR, "description": description}


SAMPLE = {
    "type": "object",
    "description": "A sample: `completion` plus the recipe's fields (`groundrl recipes --json` lists them).",
    "properties": {"id": {}, "completion": {"type": "string"}},
    "required": ["completion"],
    "additionalProperties": True,
}
RESULT = {
    "type": "object",
    "properties": {
        "id": {},
        "reward": {"type": ["number", "null"]},
        "parts": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
        "reasons": {"type": "object", "additionalProperties": {"type": "string"}},
        "error": {"type": "string", "description": "present instead of reward/parts for a bad sample"},
    },
}
COMMON = {
    "400": _err("the body is not JSON (or nested too deep)"),
    "401": _err("missing or wrong bearer token (when the server has one)"),
    "413": _err("the body is over the server's limit"),
    "422": _err("the envelope is malformed; `detail` names the field"),
    "503": _err("overloaded: retry after `Retry-After` seconds"),
}


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _ok(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"200": {"description": description, "content": {"application/json": {"schema": schema}}}}


SCORE = {
    "openapi_extra": _json_body(
        {
            "type": "object",
            "properties": {
                "recipe": {"type": "string", "description": "optional when the server has a default"},
                "samples": {"type": "array", "items": SAMPLE},
            },
            "required": ["samples"],
            "additionalProperties": False,
        }
    ),
    "responses": {
        **_ok(
            {"type": "object", "properties": {"results": {"type": "array", "items": RESULT}}},
            "one result per sample, in order",
        ),
        **COMMON,
    },
}
GET_REWARD = {
    "openapi_extra": _json_body(
        {
            "type": "object",
            "properties": {
                "query": {"type": "array", "items": {"type": "string"}, "description": "prompt + response"},
                "prompts": {"type": "array", "items": {"type": "string"}},
                "labels": {
                    "type": ["array", "null"],
                    "description": "one label per query (JSON object labels give several fields)",
                },
            },
            "required": ["query"],
        }
    ),
    "responses": {
        **_ok(
            {
                "type": "object",
                "properties": {
                    "rewards": {"type": "array", "items": {"type": "number"}},
                    "scores": {"type": "array", "items": {"type": "number"}},
                    "extra_logs": {"type": "object", "additionalProperties": {"type": "array"}},
                },
            },
            "OpenRLHF's reward response",
        ),
        **COMMON,
    },
}
HEALTH = {"responses": _ok({"type": "object"}, "status, default recipe, recipes served")}
METRICS = {
    "response_class": PlainTextResponse,
    "responses": {
        "200": {
            "description": "Prometheus text exposition 0.0.4",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        "401": COMMON["401"],
    },
}
