"""Issue 16 S8: no API description unless asked (`docs=True` / `groundrl serve --docs`);
then /openapi.json describes the bodies the routes really read, their status codes, and
/metrics as text — behind the token like every route but /health. Issue 26 item 9: the
published request schemas are the ones the server checks with, and a property test finds
0 bodies on which the description and the server disagree."""

import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrl.serve.app import create_app


def test_docs_off_by_default():
    c = TestClient(create_app("eqa_rm"))
    assert c.get("/openapi.json").status_code == 404 and c.get("/docs").status_code == 404


def test_openapi_describes_bodies_and_statuses():
    c = TestClient(create_app("eqa_rm", token="t", docs=True))
    assert c.get("/openapi.json").status_code == 401
    doc = c.get("/openapi.json", headers={"Authorization": "Bearer t"}).json()
    score = doc["paths"]["/score"]["post"]
    body = score["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["samples"] and body["additionalProperties"] is False
    assert set(score["responses"]) == {"200", "400", "401", "408", "413", "422", "503"}
    reward = doc["paths"]["/get_reward"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert reward["required"] == ["query"] and set(reward["properties"]) == {"query", "prompts", "labels"}
    assert list(doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]) == ["text/plain"]
    assert c.get("/docs", headers={"Authorization": "Bearer t"}).status_code == 200


# --- issue 26 item 9: /openapi.json and the server agree on every body ---------------------

MAX = 3


@pytest.fixture(scope="module")
def client():
    """One client (one event loop, where the batchers live) for the module."""
    with TestClient(create_app("eqa_rm", docs=True, max_samples=MAX)) as c:
        c.doc = c.get("/openapi.json").json()
        yield c


def _schema(client, route):
    return client.doc["paths"][route]["post"]["requestBody"]["content"]["application/json"]["schema"]


def fits(schema, v):
    """An independent reading of the JSON Schema subset /openapi.json uses (not the
    server's validator): does ``v`` fit ``schema``?"""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    is_type = {
        "object": lambda x: isinstance(x, dict),
        "array": lambda x: isinstance(x, list),
        "string": lambda x: isinstance(x, str),
        "null": lambda x: x is None,
    }
    if kinds and not any(is_type[k](v) for k in kinds):
        return False
    if "enum" in schema and v not in schema["enum"]:
        return False
    if isinstance(v, dict):
        props = schema.get("properties", {})
        if any(k not in v for k in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and any(k not in props for k in v):
            return False
        if any(k in v and not fits(sub, v[k]) for k, sub in props.items()):
            return False
    if isinstance(v, list):
        if len(v) > schema.get("maxItems", len(v)):
            return False
        if schema.get("items") and not all(fits(schema["items"], x) for x in v):
            return False
    return True


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "x", "eqa_rm", "nope"])
)
values = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "completion", "gt_score"]), kids, max_size=3)
    ),
    max_leaves=8,
)
sample = (
    st.fixed_dictionaries(
        {
            "completion": st.sampled_from(["<score>7</score>", "x"]),
            "gt_score": st.sampled_from([7, "7", None]),
        }
    )
    | values
)
keys_score = ["recipe", "samples", "sample", "extra"]
score_bodies = st.dictionaries(
    st.sampled_from(keys_score),
    st.one_of(values, st.lists(sample, max_size=MAX + 1), st.sampled_from(["eqa_rm", "argos", "nope"])),
    max_size=3,
)
strs = st.lists(st.sampled_from(["Q a", "Q ", "b"]), max_size=MAX + 1)
reward_bodies = st.dictionaries(
    st.sampled_from(["query", "prompts", "labels", "other"]),
    st.one_of(values, strs, st.lists(st.one_of(st.sampled_from(["7", "x"]), st.none()), max_size=MAX + 1)),
    max_size=4,
)


def _lengths_agree(body):
    q = body.get("query")
    n = len(q) if isinstance(q, list) else None
    return all(not isinstance(body.get(k), list) or len(body[k]) == n for k in ("prompts", "labels"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=score_bodies)
def test_score_accepts_exactly_the_bodies_its_schema_describes(client, body):
    r = client.post("/score", content=json.dumps(body))
    assert r.status_code in (200, 422), r.text
    assert (r.status_code == 200) == fits(_schema(client, "/score"), body), (body, r.text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=reward_bodies)
def test_get_reward_accepts_exactly_the_bodies_its_schema_describes(client, body):
    r = client.post("/get_reward", content=json.dumps(body))
    assert r.status_code in (200, 422), r.text
    # the one rule a JSON Schema cannot state (in the schema's description): equal lengths
    assert (r.status_code == 200) == (fits(_schema(client, "/get_reward"), body) and _lengths_agree(body)), (
        body,
        r.text,
    )


def test_the_four_bodies_the_old_description_got_wrong(client):
    """Accepted by the server, refused by the old description: a sample without
    `completion`, `prompts: null`; refused by the server, accepted by it: an unknown
    recipe, more samples than the server takes."""
    cases = [
        ("/score", {"samples": [{"gt_score": 7}]}, True),
        ("/get_reward", {"query": ["a"], "prompts": None}, True),
        ("/score", {"recipe": "nope", "samples": []}, False),
        ("/score", {"samples": [{}] * (MAX + 1)}, False),
    ]
    for route, body, ok in cases:
        assert fits(_schema(client, route), body) is ok
        assert (client.post(route, json=body).status_code == 200) is ok
