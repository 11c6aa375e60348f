"""/score and /get_reward on a live 127.0.0.1 server against direct library calls and
hand-worked values: hand-made recipes, every real recipe, and a judge-backed recipe whose
judge is a local OpenAI-compatible server."""

import asyncio
import json

import httpx
import pytest

from groundrl.integrations.openrlhf import make_reward_func
from groundrl.recipes import builtin_recipe_names, get_recipe
from groundrl.scoring import score_samples
from groundrl.serve.app import create_app
from groundrl.types import NO_DEDUCTION

# valid fields for every built-in recipe, from its own examples (Recipe.examples); the completion
# varies. Built-ins only: an installed plugin need not have examples (issue 39 item 8)
FIELDS = {name: get_recipe(name).example_fields() for name in builtin_recipe_names()}
PLAN = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
    }
)
COMPLETIONS = [
    "<critique>fine</critique><score>5</score>",
    "<rubric>r</rubric><eval>e</eval><answer>1</answer>",
    "<response>ok</response><plans>1.[Navigate] to the table</plans><actions>[['Pick', 'Apple']]</actions>",
    'The cup is at <points x1="3" y1="4" alt="cup">cup</points>. <answer>B</answer>',
    PLAN,
    "",
    "garbage \x00 ✓",
]


def test_score_hand_made_recipe_hand_worked_and_equal_to_the_library(tools):
    rec = tools.toy_recipe()
    samples = [
        {"id": "a", "completion": "yes", "gold": "yes"},
        {"id": "b", "completion": "no", "gold": "yes"},
        {"id": "c", "completion": "x"},
        5,
    ]
    with tools.Running(create_app(recipes={"toy": rec})) as srv:
        r = httpx.post(srv.url + "/score", json={"recipe": "toy", "samples": samples})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    res = r.json()["results"]
    # exact ×1 + length ×0.01: "yes"/"yes" → 1 + 0.03; "no"/"yes" → 0 + 0.02
    assert res[0] == {
        "id": "a",
        "reward": pytest.approx(1.03),
        "parts": {"exact": 1.0, "length": 3.0},
        "reasons": {"exact": NO_DEDUCTION, "length": NO_DEDUCTION},  # every value has a reason
    }
    assert res[1]["reward"] == pytest.approx(0.02) and res[1]["parts"] == {"exact": 0.0, "length": 2.0}
    # a bad sample is an error entry naming its index in the request; the others are scored
    assert res[2] == {
        "id": "c",
        "error": "sample 3: missing field 'gold' (recipe toy needs completion, gold)",
    }
    assert res[3] == {"id": None, "error": "sample 4 is a JSON number, expected an object"}
    direct = score_samples(rec, rec.rubric(), samples[:3])
    assert res[:3] == [{k: v for k, v in d.items() if k != "line"} for d in direct]


def test_score_every_real_recipe_equals_the_library(tools):
    app = create_app()
    with_ids = {
        name: [{"id": i, "completion": c, **fields} for i, c in enumerate(COMPLETIONS)]
        for name, fields in FIELDS.items()
    }
    with tools.Running(app) as srv:
        url = srv.url
        for name in FIELDS:
            r = httpx.post(url + "/score", json={"recipe": name, "samples": with_ids[name]})
            assert r.status_code == 200, r.text
            rec = get_recipe(name)
            direct = score_samples(rec, rec.rubric(), with_ids[name])
            expected = json.loads(json.dumps([{k: v for k, v in d.items() if k != "line"} for d in direct]))
            assert r.json()["results"] == expected, name
        # hand-worked EQA-RM accuracy: max(0, 1 - (|5 - 7| / 10)^2) = 0.96
        sample = {"completion": COMPLETIONS[0], "gt_score": 7}
        r = httpx.post(url + "/score", json={"recipe": "eqa_rm", "samples": [sample]})
        assert r.json()["results"][0]["parts"]["accuracy"] == pytest.approx(0.96)


def test_default_recipe_lets_score_leave_it_out(tools):
    with tools.Running(create_app("eqa_rm")) as srv:
        r = httpx.post(
            srv.url + "/score", json={"samples": [{"completion": "<score>7</score>", "gt_score": 7}]}
        )
        assert r.status_code == 200 and r.json()["results"][0]["parts"]["accuracy"] == 1.0
        assert httpx.get(srv.url + "/health").json()["recipe"] == "eqa_rm"


def test_get_reward_hand_made_recipe(tools):
    body = {
        "query": ["PROMPT yes", "PROMPT yes", "OTHER no", "PROMPT "],
        "prompts": ["PROMPT ", "PROMPT ", "PROMPT ", "PROMPT "],
        "labels": ["yes", '{"gold": "no"}', "OTHER no", "yes"],
    }
    with tools.Running(create_app("toy", recipes={"toy": tools.toy_recipe()})) as srv:
        r = httpx.post(srv.url + "/get_reward", json=body)
    assert r.status_code == 200
    out = r.json()
    # 1: "yes" vs "yes" → 1.03; 2: a JSON-object label supplies the fields → "yes" vs "no" → 0.03;
    # 3: the prompt is not a prefix, the whole query is the completion → "OTHER no" matches;
    # 4: empty completion → 0
    assert out["rewards"] == pytest.approx([1.03, 0.03, 1.08, 0.0])
    assert out["scores"] == out["rewards"]
    assert out["extra_logs"] == {"exact": [1.0, 0.0, 1.0, 0.0], "length": [3.0, 3.0, 8.0, 0.0]}


@pytest.mark.parametrize("recipe", list(FIELDS))
def test_get_reward_equals_the_openrlhf_reward_function(recipe, tools):
    gold = FIELDS[recipe][get_recipe(recipe).label_field]  # the label is the gold field alone
    label = gold if isinstance(gold, str) else json.dumps(gold)
    body = {
        "query": ["Q: " + c for c in COMPLETIONS],
        "prompts": ["Q: "] * len(COMPLETIONS),
        "labels": [label] * len(COMPLETIONS),
    }
    with tools.Running(create_app(recipe)) as srv:
        url = srv.url
        r = httpx.post(url + "/get_reward", json=body)
        assert r.status_code == 200, r.text
        # no prompts: each query is the completion; no labels: a required gold field is
        # absent, which is a per-query error with a null reward (issue 29), not a silent 0
        r2 = httpx.post(url + "/get_reward", json={"query": COMPLETIONS})
    direct = make_reward_func(recipe, tensors=False)(body["query"], body["prompts"], body["labels"])
    got = r.json()
    assert got.pop("errors") == [None] * len(COMPLETIONS)
    assert got == direct
    out2 = r2.json()
    rec = get_recipe(recipe)
    if rec.label_field in rec.required:
        assert out2["rewards"] == out2["scores"] == [None] * len(COMPLETIONS)
        assert all(f"gives no {rec.label_field!r}" in e for e in out2["errors"])
    else:  # an optional gold (EmbodiedBrain's): the queries are scored without it
        assert out2["errors"] == [None] * len(COMPLETIONS) and None not in out2["rewards"]


def test_get_reward_without_a_recipe_is_a_422_that_says_what_to_do(tools):
    with tools.Running(create_app()) as srv:
        url = srv.url
        r = httpx.post(url + "/get_reward", json={"query": ["x"], "prompts": [""], "labels": ["1"]})
    assert r.status_code == 422 and "--recipe" in r.json()["detail"]


def test_requests_share_judge_batches(tools):
    judge = tools.SlowJudge(0.05)
    rec = tools.toy_recipe(judge=judge)
    app = create_app("toy", recipes={"toy": rec}, max_batch=64, max_wait_ms=100)

    async def burst(url):
        async with httpx.AsyncClient(timeout=30) as c:
            scores = [
                c.post(
                    url + "/score",
                    json={"samples": [{"completion": "a", "gold": "a", "k": 10 * i + j} for j in range(2)]},
                )
                for i in range(8)
            ]
            rewards = [
                c.post(
                    url + "/get_reward",
                    json={
                        "query": ["a", "b"],
                        "prompts": ["", ""],
                        "labels": [json.dumps({"gold": "a", "k": i})] * 2,
                    },
                )
                for i in range(8)
            ]
            return await asyncio.gather(*scores, *rewards)

    with tools.Running(app) as srv:
        rs = asyncio.run(burst(srv.url))
    assert all(r.status_code == 200 for r in rs)
    for i, r in enumerate(rs[:8]):  # exact 1 + 0.01·1 + judge k
        assert [x["parts"]["judge"] for x in r.json()["results"]] == [10.0 * i, 10.0 * i + 1]
        assert [x["reward"] for x in r.json()["results"]] == pytest.approx([1.01 + 10 * i, 1.01 + 10 * i + 1])
    for i, r in enumerate(rs[8:]):
        assert r.json()["extra_logs"]["judge"] == [float(i), float(i)]
        assert r.json()["rewards"] == pytest.approx([1.01 + i, 0.01 + i])
    # 32 judged samples from 16 requests in a handful of judge calls (one per route when all
    # requests arrive within max_wait)
    assert sum(judge.calls) == 32 and len(judge.calls) <= 6


def test_judge_backed_recipe_through_a_local_openai_server(chat_server, tools):
    pytest.importorskip("groundrl.recipes.judge")
    from groundrl.recipes.judge import recipe_judge
    from groundrl.serve.factory import build_app

    # the proxy agent picks response 1 whatever it is shown
    chat_server.responder = lambda msgs, body: "<answer>1</answer>"
    pair = {"query": "How many chairs?", "response_1": "three", "response_2": "four"}
    samples = [
        {"id": 0, "completion": "<rubric>r</rubric><eval>e</eval><answer>1</answer>", **pair, "preferred": 1},
        {"id": 1, "completion": "<rubric>r</rubric><eval>e</eval><answer>1</answer>", **pair, "preferred": 2},
        {"id": 2, "completion": "x", "preferred": 1},
    ]
    judge = {"backend": "openai", "model": "m", "url": chat_server.base_url}
    app = build_app({"recipe": "proxy_grm", "judge": judge, "max_wait_ms": 1})
    with tools.Running(app) as srv:
        url = srv.url
        r = httpx.post(url + "/score", json={"samples": samples})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    # proxy ±1 against preferred; accuracy ±1; format 0/1 ×0.5; no pair fields → proxy not applicable
    assert [x["parts"]["proxy"] for x in res] == [1.0, -1.0, None]
    assert res[0]["reward"] == pytest.approx(1 + 0.5 + 1) and res[1]["reward"] == pytest.approx(-1 + 0.5 - 1)
    rub = get_recipe("proxy_grm").rubric(judge=recipe_judge("proxy_grm", "openai", "m", chat_server.base_url))
    direct = score_samples(get_recipe("proxy_grm"), rub, samples)
    assert res == [{k: v for k, v in d.items() if k != "line"} for d in direct]


def test_json_answers_have_no_nan_and_accept_numpy_scalars():
    import numpy as np

    from groundrl.serve.app import dumps

    assert dumps({"a": float("nan"), "b": [float("inf"), 1.0], "c": np.float32(0.5), "d": "é"}) == (
        '{"a":null,"b":[null,1.0],"c":0.5,"d":"é"}'.encode()
    )
