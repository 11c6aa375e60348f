import json

import pytest

from groundrl.parse.plans import extract_actions, plan_lines
from groundrl.rewards.planning import (
    DEFAULT_ATOMIC_ACTIONS,
    embodied_format,
    load_action_map,
    plan_f1,
    plan_order_f1,
    planning_scores,
    reinforced_accuracy,
    reinforced_format,
)

AMAP = {0: "find a Apple", 1: "pick up the Apple", 2: "find a Fridge", 3: "open the Fridge"}
KEYS = {"reasoning_and_reflection": "r", "visual_state_description": "v", "language_plan": "l"}


def plan(steps, drop=None, **extra):
    d = {**KEYS, "executable_plan": steps, **extra}
    if drop:
        d.pop(drop)
    return json.dumps(d)


def step(i, name=None):
    return {"action_id": i, "action_name": AMAP[i] if name is None else name}


GOLD3 = ["find a Apple", "pick up the Apple", "find a Fridge"]


def test_perfect_plan():
    c = plan([step(0), step(1), step(2)])
    assert reinforced_format(c, AMAP).value == 0.5
    assert reinforced_accuracy(c, GOLD3).value == 1.0


def test_prefix_two_of_three():
    c = plan([step(0), step(1), step(3)])
    # c = 2, T = 3: 2·3 / (3·4)
    assert reinforced_accuracy(c, GOLD3).value == pytest.approx(0.5)
    assert reinforced_accuracy(c, GOLD3).reason == "prefix 2/3"


def test_an_over_long_plan_gets_full_marks_and_says_why():
    # the gold's 3 steps, then one more: prefix accuracy ignores what follows the gold
    c = plan([step(0), step(1), step(2), step(3)])
    s = reinforced_accuracy(c, GOLD3)
    assert s.value == 1.0
    assert (
        s.reason == "whole gold plan matched (3/3); the 1 step(s) after it are not scored (prefix accuracy)"
    )


def test_gold_as_literal_string_and_wrong_case_names():
    c = plan([step(0, "FIND  a apple"), step(1, "Pick Up The Apple")])
    assert reinforced_accuracy(
        c, "['find a Apple', 'pick up the Apple', 'find a Fridge']"
    ).value == pytest.approx(6 / 12)  # c = 2, T = 3
    # case-insensitive map match: full format
    assert reinforced_format(c, AMAP).value == 0.5


def test_single_step_penalty():
    two = plan([step(0), step(1)])
    # T = 1, c = 1: 1 - 0.25
    assert reinforced_accuracy(two, ["find a Apple"]).value == pytest.approx(0.75)
    # T = 1, c = 0, extra steps: 0 - 0.25
    assert reinforced_accuracy(two, ["open the Fridge"]).value == pytest.approx(-0.25)
    one = plan([step(0)])
    assert reinforced_accuracy(one, ["find a Apple"]).value == 1.0


def test_missing_key():
    c = plan([step(0), step(1)], drop="language_plan")
    # 0 + 0.125·2/2 + 0.25·2/2
    assert reinforced_format(c, AMAP).value == 0.375
    assert "language_plan" in reinforced_format(c, AMAP).reason


def test_string_and_bool_action_id_fail_both_step_terms():
    c = plan(
        [
            {"action_id": "1", "action_name": "pick up the Apple"},
            step(0),
            {"action_id": True, "action_name": "pick up the Apple"},
        ]
    )
    # 0.125 + 0.125·1/3 + 0.25·1/3
    assert reinforced_format(c, AMAP).value == pytest.approx(0.125 + 0.125 / 3 + 0.25 / 3)


def test_wrong_id_name_pair_not_in_map():
    c = plan([{"action_id": 1, "action_name": "find a Apple"}])
    assert reinforced_format(c, AMAP).value == 0.25


def test_empty_or_non_list_plan():
    assert reinforced_format(plan([]), AMAP).value == 0.125
    assert reinforced_format(plan("find apple"), AMAP).value == 0.125
    assert reinforced_accuracy(plan("find apple"), GOLD3).value == 0.0


def test_non_dict_step_is_a_mismatch_at_its_position():
    c = plan([step(0), "pick up the Apple", step(2)])
    assert reinforced_accuracy(c, GOLD3).value == pytest.approx(2 / 12)


def test_fenced_json_strict_vs_lenient():
    c = "```json\n" + plan([step(0), step(1), step(2)]) + "\n```"
    assert reinforced_format(c, AMAP).value == 0.0
    assert reinforced_accuracy(c, GOLD3).value == 0.0
    assert reinforced_format(c, AMAP, lenient=True).value == 0.5
    assert reinforced_accuracy(c, GOLD3, lenient=True).value == 1.0


def test_unparseable_and_bad_gold():
    s = reinforced_format("not json", AMAP)
    assert s.value == 0.0 and "invalid JSON" in s.reason
    assert reinforced_accuracy(plan([step(0)]), []).reason == "empty gold plan"
    assert reinforced_accuracy(plan([step(0)]), None).value == 0.0
    assert reinforced_accuracy(plan([step(0)]), "[not a list").value == 0.0


def test_no_action_map_means_map_term_zero():
    s = reinforced_format(plan([step(0)]))
    assert s.value == 0.25 and "no action map" in s.reason


def test_load_action_map(tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"0": "a", "1": "b"}))
    assert load_action_map(f) == {0: "a", 1: "b"}
    with pytest.raises(FileNotFoundError, match="not found"):
        load_action_map(tmp_path / "nope.json")
    f.write_text(json.dumps({"x": "a"}))
    with pytest.raises(ValueError, match="not an integer"):
        load_action_map(f)
    f.write_text("[1]")
    with pytest.raises(ValueError, match="JSON object"):
        load_action_map(f)


def test_action_map_is_read_only_and_pickles():
    import copy
    import pickle

    amap = load_action_map({"0": " Open  Fridge", 1: "goto sink", 2: "  "})
    assert amap == {0: " Open  Fridge", 1: "goto sink", 2: "  "} and isinstance(amap, dict)
    # a blank name accepts no step, as the step-by-step path says ("" never matches)
    assert amap.pairs == {(0, "open fridge"), (1, "goto sink")}
    for mutate in (
        lambda m: m.__setitem__(3, "x"),
        lambda m: m.update({3: "x"}),
        lambda m: m.pop(0),
        lambda m: m.clear(),
        lambda m: m.setdefault(3, "x"),
    ):
        with pytest.raises(TypeError, match="read-only"):
            mutate(amap)
    assert amap == {0: " Open  Fridge", 1: "goto sink", 2: "  "}
    for clone in (pickle.loads(pickle.dumps(amap)), copy.deepcopy(amap)):
        assert type(clone) is type(amap) and clone == amap and clone.pairs == amap.pairs


def test_action_map_and_plain_dict_score_alike():
    # 3 steps: a match through normalisation, a wrong name, an unknown id
    c = plan([step(0, "open fridge"), step(1, "goto fridge"), step(7, "goto sink")])
    plain = {0: " Open  Fridge", 1: "goto sink"}
    fast = reinforced_format(c, load_action_map(plain))
    assert fast == reinforced_format(c, plain)
    assert fast.value == pytest.approx(0.125 + 0.125 + 0.25 / 3) and "1/3 steps match" in fast.reason


def test_external_action_map(external_data):
    amap = load_action_map(external_data / "reinforced-reasoning" / "alfred_action_map.json")
    assert len(amap) == 225
    ids = [0, 1, 18]
    c = plan([{"action_id": i, "action_name": amap[i]} for i in ids])
    assert reinforced_format(c, amap).value == 0.5
    assert reinforced_accuracy(c, [amap[i] for i in ids]).value == 1.0


# ---- EmbodiedBrain format -------------------------------------------------

EB = "<response>ok</response><plans>1.[Navigate] go\n2.[Manipulate] pick</plans><actions>[['Navigate', 'Apple'], ['Pick', 'Apple']]</actions>"


def test_atomic_set_has_57_verbs():
    assert len(DEFAULT_ATOMIC_ACTIONS) == 57


def test_embodied_format_perfect():
    assert embodied_format(EB).value == pytest.approx(1.0)


def test_embodied_format_halving_when_counts_differ():
    c = "<response>ok</response><plans>1.[Navigate] go\n2.[Manipulate] pick</plans><actions>[['Navigate','Apple'],['Pick','Apple'],['Open','Fridge']]</actions>"
    # 0.2 + 0.3·1/2 + 0.5·1/2
    s = embodied_format(c)
    assert s.value == pytest.approx(0.6) and "halved" in s.reason


def test_embodied_format_verb_without_object_and_unknown_verbs():
    c = "<RESPONSE>ok</Response><plans>1.[Navigate] a\n2.[Walk] b</plans><actions>[['Clap'], ['Teleport', 'X']]</actions>"
    # 0.2 + 0.3·1/2 + 0.5·(0.5 + 0)/2
    assert embodied_format(c).value == pytest.approx(0.2 + 0.15 + 0.125)


def test_embodied_format_unparseable_actions_and_no_tags():
    c = "<response>ok</response><plans>1.[Navigate] a</plans><actions>[['Pick', 'Apple'</actions>"
    assert embodied_format(c).value == pytest.approx(0.2 + 0.3)
    assert embodied_format("plain text").value == 0.0
    assert embodied_format("</response><response>").value == 0.0  # opening must come first
    assert embodied_format(None).value == 0.0


def test_embodied_format_actions_over_lines_and_code_is_not_run():
    c = "<response>x</response><actions>[['Pick',\n   'Apple']]</actions>"
    assert extract_actions(c).value == [["Pick", "Apple"]]
    assert embodied_format(c).value == pytest.approx(0.2 + 0.5)
    evil = "<actions>__import__('os').system('touch /tmp/groundrl_pwned')</actions>"
    assert embodied_format(evil).value == 0.0


def test_embodied_gold_answers(external_data):
    rows = json.loads((external_data / "embodiedbrain" / "simulation_benchmark_set.json").read_text())
    first = rows[0]["conversations"][1]["content"]
    # plan lines sit outside the empty <plans></plans> → plan_types 0, no halving;
    # actions: Find (not atomic) 0, Navigate 1, Pick 1, Cut 1, Place 1, Pick 1, Place 1 → 6/7
    assert plan_lines(first) == []
    assert embodied_format(first).value == pytest.approx(0.2 + 0.5 * 6 / 7)
    for row in rows:
        gold = row["conversations"][1]["content"]
        s = embodied_format(gold)
        assert 0.0 <= s.value <= 1.0
        assert plan_f1(gold, gold).value == 1.0
        assert plan_order_f1(gold, gold).value == 1.0


# ---- planning P/R/F1 ------------------------------------------------------


def test_planning_quantity_vs_order():
    gold = [["Pick", "Knife"], ["Cut", "Bread"], ["Place", "Knife", "Counter"]]
    pred = [["Cut", "Bread"], ["Pick", "Knife"], ["Place", "Knife", "Counter"]]
    s = planning_scores(pred, gold)
    assert s["quantity"].f1 == 1.0
    # LCS = 2 of 3 on both sides
    assert s["order"].precision == pytest.approx(2 / 3) and s["order"].f1 == pytest.approx(2 / 3)


def test_planning_locomotion_dropped_and_synonyms():
    gold = "<actions>[['Find','Apple'], ['Pick','Apple'], ['Place','Apple','Table']]</actions>"
    pred = "<actions>[['Navigate','Apple'], ['pick up','the apple'], ['Pick and Place','Apple','table'], ['Wave']]</actions>"
    s = planning_scores(pred, gold)
    # canonical pred: (pick, apple), (place, apple, table), (wave); gold: (pick, apple), (place, apple, table)
    assert s["quantity"].precision == pytest.approx(2 / 3)
    assert s["quantity"].recall == 1.0
    assert s["quantity"].f1 == pytest.approx(0.8)


def test_planning_one_to_one_matching():
    gold = [["Pick", "Apple"]]
    pred = [["Pick", "Apple"], ["Pick", "Apple"]]
    s = planning_scores(pred, gold)
    assert s["quantity"].precision == 0.5 and s["quantity"].recall == 1.0


def test_planning_empty_pred_and_empty_gold():
    gold = [["Pick", "Apple"]]
    s = planning_scores("<actions>[]</actions>", gold)
    assert s["quantity"].f1 == 0.0 and s["order"].f1 == 0.0
    assert planning_scores(gold, [["Find", "Apple"]]) is None
    sc = plan_f1("<actions>[['Pick','Apple']]</actions>", "no actions here")
    assert sc.value is None and "gold has no" in sc.reason


def test_custom_matcher_and_failing_matcher():
    gold = [["Pick", "Apple"]]
    pred = [["Pick", "Red Apple"]]
    assert planning_scores(pred, gold)["quantity"].f1 == 0.0
    loose = planning_scores(pred, gold, matcher=lambda p, g: p[0] == g[0] and g[1] in p[1])
    assert loose["quantity"].f1 == 1.0

    def boom(p, g):
        raise RuntimeError("judge down")

    s = plan_f1(
        "<actions>[['Pick','Apple']]</actions>", "<actions>[['Pick','Apple']]</actions>", matcher=boom
    )
    assert s.value == 0.0 and "judge down" in s.reason


# ---- configuration, choices where the spec is open, totality --------------


def test_action_map_with_string_keys_is_looked_up():
    str_keys = {str(k): v for k, v in AMAP.items()}  # as json.load gives it
    assert reinforced_format(plan([step(0), step(1)]), str_keys).value == 0.5


def test_id_missing_from_map_and_empty_names_do_not_match():
    c = plan([{"action_id": 99, "action_name": ""}])
    # 0.125 + 0.125·1/1 + 0
    assert reinforced_format(c, {0: ""}).value == 0.25


def test_atomic_actions_as_one_string_is_a_config_error():
    with pytest.raises(ValueError, match="not one string"):
        embodied_format(EB, "Pick")


def test_embodied_format_custom_atomic_set():
    # Navigate no longer atomic: actions 0 + 1 → 1/2
    assert embodied_format(EB, ["Pick"]).value == pytest.approx(0.2 + 0.3 + 0.5 * 0.5)


def test_malformed_predicted_items_lower_precision():
    gold = [["Pick", "Apple"], ["Place", "Apple", "Table"]]
    pred = [["Pick", "Apple"], ["Place", 3], "Pick Apple", ["Find", 1], ["Place", "Apple", "Table"]]
    s = planning_scores(pred, gold)
    # 2 matches; |pred| = 2 good + 2 malformed (the Find item is locomotion, dropped)
    assert s["quantity"].precision == pytest.approx(2 / 4)
    assert s["quantity"].recall == 1.0
    assert s["order"].precision == pytest.approx(2 / 4)
    # malformed gold items are dropped: R = 1/1
    assert planning_scores([["Pick", "Apple"]], [["Pick", "Apple"], ["Pick", None]])["quantity"].recall == 1.0


def test_plan_scores_reasons():
    gold = "<actions>[['Pick','Apple'], ['Cut','Bread']]</actions>"
    s = plan_order_f1("<actions>[['Cut','Bread'], ['Pick','Apple']]</actions>", gold)
    # LCS 1 of 2 each side: P = R = F1 = 0.5
    assert s.value == 0.5 and s.reason == "P=0.500 R=0.500"
    none = plan_f1("I will pick the apple.", gold)
    assert none.value == 0.0 and none.reason == "completion has no (non-locomotion) actions"
    assert plan_f1(None, gold).value == 0.0
    assert plan_f1(gold, None).value is None


def test_adversarial_inputs_give_scores():
    huge = [
        "{" * 1_000_000,
        "<actions>" + "[" * 200_000 + "</actions>",
        "<plans>" + "1.[Navigate] x\n" * 70_000 + "</plans>",
        json.dumps({"executable_plan": [[1]] * 100_000}),
    ]
    for text in huge:
        for s in (
            reinforced_format(text, AMAP),
            reinforced_accuracy(text, GOLD3),
            embodied_format(text),
            plan_f1(text, EB),
        ):
            assert s.value is not None and -0.25 <= s.value <= 1.0
