"""Issue 16 FS1: a sample's action_map never names a file the scorer reads. It is a
configured name (option action_maps, loaded at build) or an inline mapping; anything
else scores the format's map term as refused, with a reason that echoes no file."""

import json

from groundrl.recipes import get_recipe

PLAN = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
    }
)
GOLD = ["find a Apple"]


def _fmt(rubric, **sample):
    return rubric.score(PLAN, gold=GOLD, **sample).parts["format"]


def test_sample_paths_are_refused_without_reading(tmp_path):
    secret = tmp_path / "map.json"
    secret.write_text(json.dumps({"0": "find a Apple"}))
    rubric = get_recipe("reinforced_planning").rubric()
    for value in (str(secret), "/etc/passwd", "/nonexistent", "../../etc/hostname", 7):
        s = _fmt(rubric, action_map=value)
        assert s.value == 0.0 and "paths are not read" in s.reason and "root" not in s.reason


def test_named_and_inline_maps(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"0": "find a Apple"}))
    rubric = get_recipe("reinforced_planning").rubric(action_maps={"alfred": str(good)})
    by_name = _fmt(rubric, action_map="alfred")
    inline = _fmt(rubric, action_map={"0": "find a Apple"})
    wrong_inline = _fmt(rubric, action_map={"0": "pick up the Apple"})
    # all four keys 0.125 + valid steps 0.125 + ids/names in the map 0.25 = 0.5
    assert by_name.value == inline.value == 0.5
    assert wrong_inline.value == 0.25  # the name under id 0 differs: map term 0
    unknown = _fmt(rubric, action_map="habitat")
    assert unknown.value == 0.0 and "alfred" in unknown.reason
