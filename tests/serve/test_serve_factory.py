"""The server from a plain configuration (CLI, uvicorn workers, Ray replicas): recipe
options reach the recipes that declare them, bad settings raise at build time."""

import json

import httpx
import pytest

from groundrl.recipes import get_recipe
from groundrl.scoring import score_samples
from groundrl.serve.app import create_app
from groundrl.serve.factory import ENV, app_from_env, build_app, check_config, recipe_options


def test_options_go_to_the_recipes_that_declare_them():
    assert recipe_options({"action_map": "m.json", "tau": 0.3}, None) == {
        "reinforced_planning": {"action_map": "m.json"},
        "argos": {"tau": 0.3},
    }
    assert recipe_options({"lenient": True}, "eqa_rm") == {"reinforced_planning": {"lenient": True}}
    judge = object()
    assert recipe_options({}, "proxy_grm", judge) == {"proxy_grm": {"judge": judge}}
    with pytest.raises(ValueError, match="no recipe has the option 'colour'"):
        recipe_options({"colour": 1}, None)


@pytest.mark.parametrize(
    "config, error, match",
    [
        ({"bogus": 1}, ValueError, "unknown server setting 'bogus'"),
        ({"options": [1]}, TypeError, "options must be a mapping"),
        ({"judge": {"model": "m"}}, ValueError, "backend"),
        ({"judge": {"backend": "openai"}}, ValueError, "give recipe too"),
        ([], TypeError, "mapping"),
    ],
)
def test_bad_configurations_raise(config, error, match):
    with pytest.raises(error, match=match):
        check_config(config)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"recipe": "nope"}, "unknown recipe 'nope'"),
        ({"max_batch": 0}, "max_batch"),
        ({"max_queue": -1}, "max_queue"),
        ({"max_wait_ms": float("inf")}, "max_wait_ms"),
        ({"token": ""}, "token"),
        ({"rubric_overrides": {"nope": None}}, "unknown recipe 'nope'"),
        ({"recipe_options": {"eqa_rm": {"colour": 1}}}, "no option 'colour'"),
    ],
)
def test_create_app_rejects_bad_settings(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        create_app(**kwargs)


def test_action_map_reaches_reinforced_planning_and_workers_rebuild_from_env(tmp_path, tools, monkeypatch):
    amap = tmp_path / "map.json"
    amap.write_text(json.dumps({"0": "find a Apple", "1": "pick up the Apple"}))
    config = {"options": {"action_map": str(amap)}, "max_batch": 8}
    plan = {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [
            {"action_id": 0, "action_name": "find a Apple"},
            {"action_id": 7, "action_name": "x"},
        ],
    }
    samples = [{"completion": json.dumps(plan), "gold": ["find a Apple", "pick up the Apple"]}]
    rec = get_recipe("reinforced_planning")
    with_map = score_samples(rec, rec.rubric(action_map=str(amap)), samples)[0]
    without = score_samples(rec, rec.rubric(), samples)[0]
    assert with_map["parts"] != without["parts"]  # the map matters for this plan
    monkeypatch.setenv(ENV, json.dumps(config))
    for app in (build_app(config), app_from_env()):
        with tools.Running(app) as srv:
            r = httpx.post(srv.url + "/score", json={"recipe": "reinforced_planning", "samples": samples})
        assert r.json()["results"][0]["parts"] == with_map["parts"]
    monkeypatch.delenv(ENV)
    with pytest.raises(RuntimeError, match=ENV):
        app_from_env()
