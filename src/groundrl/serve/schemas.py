"""The request bodies of ``/score`` and ``/get_reward`` as JSON Schemas, and the one
validator that checks them. The server validates every request with :func:`check`
against the schema that ``/openapi.json`` publishes (:mod:`groundrl.serve.openapi`), so
the description and the behaviour cannot drift apart (issue 26: the hand-written
description rejected two bodies the server accepted and accepted two it refused).

What a schema cannot say is checked after it and stated in the schema's description:
``prompts`` and ``labels``, when lists, are as long as ``query``. A sample that is not an
object or lacks a recipe field is not a request error (its result is an error entry), so
``samples`` items are unconstrained.

The validator covers the subset used here: ``type`` (one or a list), ``enum``,
``properties``, ``required``, ``additionalProperties: false``, ``items``, ``maxItems``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict


class JSONSchema(TypedDict, total=False):
    """The JSON Schema subset :func:`check` validates, plus ``description``."""

    type: str | list[str]
    enum: list[str]
    properties: dict[str, JSONSchema]
    required: list[str]
    additionalProperties: bool | JSONSchema  # check() reads only ``false``
    items: JSONSchema
    maxItems: int
    description: str


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def type_name(x: Any) -> str:
    """The JSON type of a parsed value, as a message names it."""
    for name in ("null", "boolean", "object", "array", "string", "integer", "number"):
        if _TYPES[name](x):
            return "number" if name == "integer" else name
    return type(x).__name__


def score_body(recipes: Sequence[str], max_samples: int, default: str | None) -> JSONSchema:
    recipe: JSONSchema = {"type": "string", "enum": list(recipes)}
    recipe["description"] = (
        f"the recipe (default {default})" if default else "the recipe (required: this server has no default)"
    )
    return {
        "type": "object",
        "properties": {
            "recipe": recipe,
            "samples": {
                "type": "array",
                "maxItems": max_samples,
                "items": {
                    "description": "a sample: `completion` plus the recipe's fields (`groundrl recipes --json`); "
                    "anything else is answered with an error entry for that sample"
                },
            },
        },
        "required": ["samples"] if default else ["recipe", "samples"],
        "additionalProperties": False,
    }


def reward_body(max_samples: int) -> JSONSchema:
    strings: JSONSchema = {"type": "array", "maxItems": max_samples, "items": {"type": "string"}}
    return {
        "type": "object",
        "description": "OpenRLHF's reward request; `prompts` and `labels`, when lists, are as long as `query`",
        "properties": {
            "query": {**strings, "description": "prompt + response, one per sample"},
            "prompts": {**strings, "type": ["array", "null"], "description": "each query's prompt prefix"},
            "labels": {
                "type": ["array", "null"],
                "maxItems": max_samples,
                "description": "one label per query (a JSON object label gives several fields)",
            },
        },
        "required": ["query"],
    }


def check(schema: JSONSchema, value: Any, path: str = "") -> str | None:
    """``None`` when ``value`` fits ``schema``, else a message naming the first field that
    does not (``samples``, ``query[3]``) and what it must be.

    >>> check(reward_body(4), {"query": ["a", 1]})
    '`query[1]` must be a string, got number'
    """
    where = f"`{path}`" if path else "the body"
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_TYPES[t](value) for t in allowed):
            return f"{where} must be {' or '.join(_article(t) for t in allowed)}, got {type_name(value)}"
    if "enum" in schema and value not in schema["enum"]:
        shown = repr(value)[:100]
        return f"{where} must be one of {', '.join(map(str, schema['enum']))}, got {shown}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:  # first: a misspelt field explains a missing one
            extra = sorted(k for k in value if k not in props)
            if extra:
                return f"unknown field `{extra[0]}` ({where} has {', '.join(f'`{k}`' for k in props)})"
        for key in schema.get("required", ()):
            if key not in value:
                return f"`{key}` is required" + (f" in {where}" if path else "")
        for key, sub in props.items():
            if key in value:
                err = check(sub, value[key], f"{path}.{key}" if path else key)
                if err:
                    return err
    if isinstance(value, list):
        cap = schema.get("maxItems")
        if cap is not None and len(value) > cap:
            return f"{where} holds {len(value)} items; at most {cap} per request"
        items = schema.get("items")
        if items:
            for i, v in enumerate(value):
                err = check(items, v, f"{path}[{i}]")
                if err:
                    return err
    return None


def _article(t: str) -> str:
    return {"array": "a list", "object": "an object", "null": "null", "integer": "an integer"}.get(
        t, f"a {t}"
    )
