import json

from groundrl.parse.plans import (
    REINFORCED_PLAN_KEYS,
    extract_actions,
    normalize_action_name,
    parse_reinforced_plan,
    plan_lines,
)

PLAN = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
    }
)


def test_keys_in_paper_order():
    assert REINFORCED_PLAN_KEYS == (
        "reasoning_and_reflection",
        "visual_state_description",
        "language_plan",
        "executable_plan",
    )


def test_parse_strict_and_lenient():
    assert parse_reinforced_plan(PLAN).value["executable_plan"][0]["action_id"] == 0
    assert parse_reinforced_plan("  " + PLAN + "\n").ok  # surrounding whitespace is stripped
    fenced = "Here is my plan:\n```json\n" + PLAN + "\n```"
    assert not parse_reinforced_plan(fenced).ok
    assert "strict" in parse_reinforced_plan(fenced).error
    assert parse_reinforced_plan(fenced, lenient=True).value["language_plan"] == "l"
    assert parse_reinforced_plan("[1, 2]").error == "JSON is a list, not an object"


def test_parse_is_cached_per_text_and_mode():
    parse_reinforced_plan.cache_clear()
    a = parse_reinforced_plan(PLAN)
    assert parse_reinforced_plan(PLAN) is a  # one json.loads for format + accuracy
    assert parse_reinforced_plan(PLAN, lenient=True) is not a


def test_parse_long_text_uncached_but_correct():
    padded = PLAN + " " * 40_000  # above the cache's size cap
    first = parse_reinforced_plan(padded)
    assert first.value["language_plan"] == "l"
    assert parse_reinforced_plan(padded) is not first


def test_parse_non_text():
    for bad in (None, 3, b"{}", ["{}"]):
        r = parse_reinforced_plan(bad)
        assert r.value is None and "not text" in r.error


def test_extract_actions_first_pair_raw_items_over_lines():
    text = "<actions>[['Pick',\n  'Apple'], ['Wave'], 7]</actions> <actions>[['Place']]</actions>"
    assert extract_actions(text).value == [["Pick", "Apple"], ["Wave"], 7]
    assert extract_actions("<ACTIONS>(('Pick', 'Apple'),)</Actions>").value == [("Pick", "Apple")]


def test_extract_actions_failures_have_reasons():
    assert extract_actions("no tags").error == "no <actions>…</actions>"
    assert extract_actions("<actions>{'a': 1}</actions>").error == "literal is a dict, not a list"
    assert not extract_actions("<actions></actions>").ok
    assert not extract_actions("<actions>[['Pick', 'Apple'</actions>").ok
    assert not extract_actions(None).ok


def test_plan_lines():
    text = "<plans>1.[Navigate] go\n2. [Manipulate] pick\n3.[navigate] x\nno number [Navigate]</plans>"
    assert plan_lines(text) == ["Navigate", "Manipulate", "navigate"]
    # only the first pair counts; lines outside it are ignored
    assert plan_lines("1.[Navigate] a <plans></plans> 2.[Navigate] b") == []
    assert plan_lines("1.[Navigate] a") is None
    assert plan_lines(42) is None


def test_normalize_action_name():
    assert normalize_action_name("  Pick  Up\tthe\nApple ") == "pick up the apple"
    assert normalize_action_name("STRASSE") == "strasse"
    assert normalize_action_name(None) == ""
