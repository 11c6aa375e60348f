"""A third-party recipe, pip-installed with one entry point, scores the same on every
surface: `groundrl score` (a fresh process), /score and /get_reward, and the TRL, verl
and OpenRLHF adapters; `groundrl train` builds and steps a GRPO trainer on it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROMPT = "Which city? "
SAMPLES = [
    {"id": "a", "completion": "The answer is Paris.", "answer": "paris", "city": "x"},
    {"id": "b", "completion": "London", "answer": "paris"},
]
# match = [answer in completion, case-folded] + bonus 0.5; the fields metric has weight 0
WANT = [1.5, 0.5]


def _run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "groundrl", *args], capture_output=True, text=True, **kw)


def test_registry_finds_the_entry_point(keyword_installed):
    from groundrl.recipes import UnknownRecipeError, get_recipe, recipe_names

    assert "keyword_match" in recipe_names()
    rec = get_recipe("keyword_match")
    assert rec.paper == "(third-party example)" and rec.label_field == "answer"
    with pytest.raises(UnknownRecipeError, match="keyword_match"):  # the listing names it
        get_recipe("keyword_mtach")


def test_unknown_name_without_the_package_lists_builtins():
    from groundrl.recipes import UnknownRecipeError, get_recipe

    with pytest.raises(UnknownRecipeError) as e:
        get_recipe("keyword_match")
    assert "reinforced_planning" in str(e.value) and "keyword_match'" in str(e.value)


def test_score_cli_in_a_fresh_process(keyword_installed, tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    out = tmp_path / "new" / "out.jsonl"
    r = _run("score", "keyword_match", str(data), "-o", str(out), "-O", "bonus=0.5", "-q")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["reward"] for row in rows] == WANT
    assert [row["parts"]["match"] for row in rows] == WANT
    # the **fields part got every sample field but the completion, once
    assert rows[0]["reasons"]["fields"] == "answer,city,id"
    r = _run("recipes", "--json")
    listed = {x["name"]: x for x in json.loads(r.stdout)}
    assert [o["name"] for o in listed["keyword_match"]["options"]] == ["bonus", "case_sensitive"]


def test_server_routes(keyword_installed):
    from fastapi.testclient import TestClient

    from groundrl.serve.factory import build_app

    app = build_app({"recipe": "keyword_match", "options": {"bonus": "0.5"}})
    with TestClient(app) as c:
        r = c.post("/score", json={"samples": SAMPLES})
        assert [x["reward"] for x in r.json()["results"]] == WANT
        body = {
            "query": [PROMPT + s["completion"] for s in SAMPLES],
            "prompts": [PROMPT] * 2,
            "labels": [s["answer"] for s in SAMPLES],
        }
        r = c.post("/get_reward", json=body)
        assert r.json()["rewards"] == WANT and r.json()["extra_logs"]["match"] == WANT


def test_trl_adapter(keyword_installed):
    from groundrl.integrations.trl import reward_funcs

    funcs, weights = reward_funcs("keyword_match", recipe_options={"bonus": 0.5})
    assert [f.__name__ for f in funcs] == ["match", "fields"] and weights == [1.0, 0.0]
    cols = {"answer": [s["answer"] for s in SAMPLES], "id": [s["id"] for s in SAMPLES]}
    got = funcs[0](prompts=[PROMPT] * 2, completions=[s["completion"] for s in SAMPLES], **cols)
    assert got == WANT


def test_verl_adapter(keyword_installed):
    from groundrl.integrations.verl import compute_score, make_compute_score

    bound = make_compute_score("keyword_match", bonus=0.5)
    dispatched = [
        compute_score(
            "groundrl/keyword_match", s["completion"], s["answer"], {}, recipe_options={"bonus": 0.5}
        )
        for s in SAMPLES
    ]
    assert [bound("src", s["completion"], s["answer"], {})["score"] for s in SAMPLES] == WANT
    assert [d["score"] for d in dispatched] == WANT and [d["match"] for d in dispatched] == WANT


def test_openrlhf_adapter(keyword_installed, monkeypatch):
    from groundrl.integrations import openrlhf

    queries = [PROMPT + s["completion"] for s in SAMPLES]
    labels = [s["answer"] for s in SAMPLES]
    func = openrlhf.make_reward_func("keyword_match", tensors=False, bonus=0.5)
    assert func(queries, [PROMPT] * 2, labels)["rewards"] == WANT
    monkeypatch.setenv("GROUNDRL_RECIPE", "keyword_match")
    monkeypatch.setenv("GROUNDRL_OPTION_BONUS", "0.5")
    out = openrlhf.reward_func(queries, [PROMPT] * 2, labels)
    assert out["rewards"].tolist() == WANT


def test_train_builds_and_steps(keyword_installed, tmp_path, tiny_vlm_dir):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"prompt": "Say paris", "answer": "paris"}) + "\n" for _ in range(4)))
    cfg = {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "output_dir": str(tmp_path / "run"),
        "recipe_options": {"bonus": "0.5"},
        "grpo": {"max_steps": 1, "max_completion_length": 8},
    }
    trainer = build_trainer("keyword_match", stage_settings(cfg, "keyword_match"))
    trainer.train()
    logged = [h for h in trainer.state.log_history if "rewards/match/mean" in h]
    # random completions rarely say "paris": each reward is 0.5 or 1.5, so the mean is too
    assert logged and 0.5 <= logged[0]["rewards/match/mean"] <= 1.5
