"""The OpenAPI description of the reward server's routes: the request bodies the routes
really read (they parse raw JSON themselves, for their own 400/413/422 rules) and every
status code they answer. Served at ``/openapi.json`` and ``/docs`` only when the server is
started with ``docs=True`` (``groundrl serve --docs``); off by default."""

from __future__ import annotations

from typing import Any, TypedDict

from fastapi.responses import PlainTextResponse, Response

from groundrl.serve.schemas import JSONSchema

_ERROR = {
    "description": "",
    "content": {
        "application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}}}}
    },
}


def _err(description: str) -> dict[str, Any]:
    return {**_ERROR, "description": description}


RESULT: JSONSchema = {
    "type": "object",
    "properties": {
        "id": {},
        "reward": {"type": ["number", "null"]},
        "parts": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
        "reasons": {"type": "object", "additionalProperties": {"type": "string"}},
        "error": {"type": "string", "description": "present instead of reward/parts for a bad sample"},
    },
}
COMMON: dict[int | str, dict[str, Any]] = {
    "400": _err("the body is not JSON (or nested too deep)"),
    "401": _err("missing or wrong bearer token (when the server has one)"),
    "408": _err("the body arrived too slowly (idle or under the minimum rate)"),
    "413": _err("the body is over the server's byte or JSON-value limit"),
    "422": _err("the envelope is malformed; `detail` names the field"),
    "503": _err("overloaded or shutting down: retry after `Retry-After` seconds"),
}


class RouteDocs(TypedDict, total=False):
    """A route's documentation keywords, as FastAPI's ``app.get`` / ``app.post`` take them."""

    openapi_extra: dict[str, Any]
    responses: dict[int | str, dict[str, Any]]
    response_class: type[Response]


def _json_body(schema: JSONSchema) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _ok(schema: JSONSchema, description: str) -> dict[int | str, dict[str, Any]]:
    return {"200": {"description": description, "content": {"application/json": {"schema": schema}}}}


JUDGE_HEADER = {
    "X-Groundrl-Judge-Failures": {
        "description": "judge-backed part scores of this request that are judge failures",
        "schema": {"type": "integer"},
    }
}


def score(body: JSONSchema) -> RouteDocs:
    """The route arguments of ``POST /score`` for its request schema
    (:func:`groundrl.serve.schemas.score_body`, the one the route checks requests with)."""
    ok = _ok(
        {"type": "object", "properties": {"results": {"type": "array", "items": RESULT}}},
        "one result per sample, in order",
    )
    ok["200"]["headers"] = JUDGE_HEADER
    return {"openapi_extra": _json_body(body), "responses": {**ok, **COMMON}}


def get_reward(body: JSONSchema) -> RouteDocs:
    """The route arguments of ``POST /get_reward`` (schema: :func:`~groundrl.serve.schemas.reward_body`)."""
    ok = _ok(
        {
            "type": "object",
            "properties": {
                "rewards": {"type": "array", "items": {"type": ["number", "null"]}},
                "scores": {"type": "array", "items": {"type": ["number", "null"]}},
                "extra_logs": {"type": "object", "additionalProperties": {"type": "array"}},
                "errors": {"type": "array", "items": {"type": ["string", "null"]}},
            },
        },
        "OpenRLHF's reward response (a query whose label lacks a required field: null reward, its `errors` entry)",
    )
    ok["200"]["headers"] = JUDGE_HEADER
    return {"openapi_extra": _json_body(body), "responses": {**ok, **COMMON}}


HEALTH: RouteDocs = {
    "responses": _ok(
        {"type": "object"},
        "status (ok, or degraded with judge_failure_rate when recent judge calls fail), default recipe, recipes",
    )
}
METRICS: RouteDocs = {
    "response_class": PlainTextResponse,
    "responses": {
        "200": {
            "description": "Prometheus text exposition 0.0.4",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        "401": COMMON["401"],
    },
}
