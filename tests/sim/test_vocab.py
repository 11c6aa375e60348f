import pytest

from groundrl.sim.execute import execute
from groundrl.sim.goals import Goal
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, detect_vocab, resolve
from groundrl.sim.world import Env, Obj, Scene

SCENE = Scene(
    "kitchen",
    [
        Obj("CounterTop_1", "CounterTop"),
        Obj("DiningTable_1", "DiningTable"),
        Obj("Fridge_1", "Fridge"),
        Obj("DeskLamp_1", "DeskLamp", "DiningTable_1"),
        Obj("Bread_1", "Bread", "CounterTop_1"),
        Obj("Knife_1", "Knife", "DiningTable_1"),
        Obj("Apple_1", "Apple", "CounterTop_1"),
    ],
)
TASK = Task("t", "put an apple in the fridge", SCENE, Goal("pick_and_place_simple", "Apple", "Fridge"))


@pytest.mark.parametrize(
    "name, target",
    [
        ("Apple_1", "Apple_1"),
        ("apple", "Apple"),
        ("the Apple", "Apple"),
        ("Counter", "CounterTop"),
        ("kitchen counter", "CounterTop"),
        ("refrigerator", "Fridge"),
        ("lamp", "DeskLamp"),
        ("Knfe", "Knife"),
        ("desk lamp", "DeskLamp"),
    ],
)
def test_resolve(name, target):
    assert resolve(name, Env(SCENE)).target == target


def test_resolve_failures_and_context():
    env = Env(SCENE)
    assert "no 'Spaceship'" in resolve("Spaceship", env).how
    assert "hand is empty" in resolve("it", env).how
    assert "not sliced yet" in resolve("bread slice", env).how
    from groundrl.sim.skills import Skill

    for s in [("find", "Knife"), ("pickup", "Knife"), ("find", "Bread"), ("slice", "Bread")]:
        env.step(Skill(*s))
    assert resolve("bread slice", env).target == "BreadSliced"
    assert resolve("Bread", env).target == "BreadSliced"
    assert resolve("the object in hand", env).target == "Knife_1"


@pytest.mark.parametrize(
    "plan",
    [
        [
            "find a Apple",
            "pick up the Apple",
            "find a Fridge",
            "open the Fridge",
            "put down the object in hand",
        ],
        "1. find a Apple\n2. pick up the Apple\n3. find a Fridge\n4. open the Fridge\n5. put down the object in hand",
        ["goto apple", "pickup apple", "goto fridge", "put fridge"],
        "<actions>[['Pick', 'Apple'], ['Open', 'Fridge'], ['Place', 'Apple', 'Fridge']]</actions>",
        [
            "GotoLocation countertop",
            "PickupObject apple",
            "GotoLocation fridge",
            "OpenObject fridge",
            "PutObject apple fridge",
        ],
        '{"language_plan": "x", "executable_plan": [{"action_id": 1, "action_name": "find a Apple"}, {"action_id": 2, "action_name": "pick up the Apple"}, {"action_id": 3, "action_name": "find a Fridge"}, {"action_id": 4, "action_name": "open the Fridge"}, {"action_id": 5, "action_name": "put down the object in hand"}]}',
    ],
)
def test_every_vocabulary_executes(plan):
    r = execute(TASK, plan)
    assert r.success and r.invalid_steps == 0, r.feedback


def test_embodied_brain_walks_and_rejects_unmappable_verbs():
    r = execute(
        TASK,
        "<actions>[['Pick', 'Apple'], ['Dance'], ['Open', 'Fridge'], ['Place', 'Apple', 'Fridge']]</actions>",
    )
    assert r.success and r.invalid_steps == 1
    # Pick walks to the apple (+1 step), Dance is invalid, Open walks (+1), Place is at the fridge
    assert r.steps == 6
    assert "has no household skill" in r.feedback[2]


def test_detect_vocab_and_bad_plans_never_raise():
    assert detect_vocab("find a Apple") == "eb_alfred"
    assert detect_vocab("goto apple") == "reinforced"
    assert detect_vocab("PickupObject apple") == "high_pddl"
    assert detect_vocab(["Pick", "Apple"]) == "embodied_brain"
    for bad in [
        "",
        None,
        42,
        "<actions>[[</actions>",
        "{not json",
        ["fly to the moon"],
        [{"weird": 1}],
        "x" * 100_000,
    ]:
        r = execute(TASK, bad)
        assert not r.success


def test_action_space_is_enumerated_and_stable():
    a = action_space(SCENE)
    assert a[0] == "find a Apple" and "put down the object in hand" in a.values()
    assert "slice the Bread" in a.values() and "turn on the DeskLamp" in a.values()
    assert action_space(SCENE) == a


# ---------------------------------------------------------------------------
# EB-ALFRED's own in-context example plans execute to success
# ---------------------------------------------------------------------------

_K = ["CounterTop", "DiningTable", "Cabinet", "Fridge", "Microwave", "SinkBasin", "GarbageCan"]


def _scene(room, tops, objs):
    out = [Obj(f"{t}_1", t) for t in tops]
    if "SinkBasin" in tops:
        out.append(Obj("Faucet_1", "Faucet", "SinkBasin_1"))
    out += [Obj(f"{t}_1", t, f"{p}_1") for t, p in objs]
    return Scene(room, out)


EXAMPLES = {
    # (file, index): (goal, scene)
    ("alfred_examples.json", 0): (
        Goal("look_at_obj_in_light", "AlarmClock", "DeskLamp"),
        _scene("bedroom", ["Bed", "Desk"], [("AlarmClock", "Bed"), ("DeskLamp", "Desk")]),
    ),
    ("alfred_examples.json", 1): (
        Goal("look_at_obj_in_light", "CreditCard", "FloorLamp"),
        _scene("living_room", ["Sofa", "FloorLamp"], [("CreditCard", "Sofa")]),
    ),
    ("alfred_examples.json", 3): (
        Goal("pick_and_place_simple", "Box", "DiningTable"),
        _scene("living_room", ["Sofa", "DiningTable"], [("Box", "Sofa")]),
    ),
    ("alfred_examples.json", 4): (
        Goal("pick_heat_then_place_in_recep", "Tomato", "SinkBasin", sliced=True),
        _scene("kitchen", _K, [("ButterKnife", "DiningTable"), ("Tomato", "CounterTop")]),
    ),
    ("alfred_examples.json", 5): (
        Goal("pick_and_place_simple", "HandTowel", "Cabinet"),
        _scene("bathroom", ["HandTowelHolder", "Cabinet"], [("HandTowel", "HandTowelHolder")]),
    ),
    ("alfred_examples.json", 6): (
        Goal("pick_heat_then_place_in_recep", "Apple", "DiningTable", sliced=True),
        _scene("kitchen", _K, [("Knife", "CounterTop"), ("Apple", "CounterTop")]),
    ),
    ("alfred_examples.json", 7): (
        Goal("pick_cool_then_place_in_recep", "Bread", "CounterTop", sliced=True),
        _scene("kitchen", _K, [("Knife", "DiningTable"), ("Bread", "DiningTable")]),
    ),
    ("alfred_examples.json", 8): (
        Goal("pick_clean_then_place_in_recep", "Pan", "Fridge"),
        _scene("kitchen", _K, [("Pan", "CounterTop")]),
    ),
    ("alfred_examples.json", 9): (
        Goal("pick_and_place_with_movable_recep", "CellPhone", "Desk", "Box"),
        _scene("bedroom", ["Bed", "Desk", "Sofa"], [("CellPhone", "Bed"), ("Box", "Sofa")]),
    ),
    ("alfred_long_horizon_examples.json", 2): (
        Goal("pick_cool_then_place_in_recep", "Potato", "Microwave"),
        _scene("kitchen", _K, [("Potato", "CounterTop")]),
    ),
    ("alfred_long_horizon_examples.json", 3): (
        Goal("pick_heat_then_place_in_recep", "Potato", "GarbageCan"),
        _scene("kitchen", _K, [("Potato", "Fridge")]),
    ),
    ("alfred_long_horizon_examples.json", 5): (
        Goal("pick_cool_then_place_in_recep", "Lettuce", "CounterTop", sliced=True),
        _scene("kitchen", _K, [("Knife", "CounterTop"), ("Lettuce", "DiningTable")]),
    ),
    ("alfred_long_horizon_examples.json", 6): (
        Goal("pick_cool_then_place_in_recep", "Apple", "Microwave", sliced=True),
        _scene("kitchen", _K, [("Knife", "DiningTable"), ("Apple", "CounterTop")]),
    ),
}


@pytest.mark.parametrize("key", list(EXAMPLES), ids=[f"{f.split('_')[1]}-{i}" for f, i in EXAMPLES])
def test_eb_alfred_example_plans_succeed(key, external_data):
    import json

    f, i = key
    text = json.loads((external_data / "eb-alfred" / f).read_text())[i]
    goal, scene = EXAMPLES[key]
    plan = text.split("Output:", 1)[1]  # the example's JSON, as a model would write it
    task = Task("ex", text.split("\n")[0], scene, goal)
    r = execute(task, plan, max_steps=40)
    assert r.vocab == "eb_alfred"  # JSON plans are read as the EB-ALFRED action names they carry
    assert r.success and r.invalid_steps == 0, r.feedback


# ---------------------------------------------------------------------------
# parse_plan, sliced names, rendering
# ---------------------------------------------------------------------------


def test_parse_plan_reports_resolution_and_binds_context():
    from groundrl.sim.skills import Skill
    from groundrl.sim.vocab import parse_plan

    env = Env(SCENE)
    steps = parse_plan(["goto knife", "pickup it", "goto bread", "slice bread", "put counter", "fly"], env)
    assert [s.skill for s in steps] == [
        Skill("find", "Knife"),
        None,  # "it" before anything is held
        Skill("find", "Bread"),
        Skill("slice", "Bread"),  # parsing is not executing: the missing knife fails later
        Skill("put", "CounterTop"),
        None,
    ]
    assert steps[0].reason == "type" and "synonym 'counter'" in steps[4].reason
    assert "hand is empty" in steps[1].reason and "not a Reinforced-Reasoning action" in steps[5].reason
    # context is bound by replaying: after "pickup apple", "it" is the apple in hand
    steps = parse_plan(["goto apple", "pickup apple", "goto sink", "clean it"], env)
    assert steps[3].skill == Skill("clean", "Apple_1") and steps[3].reason == "the object in hand"
    assert env.steps == 0 and env.held is None  # the caller's env is untouched


def test_parse_plan_embodied_brain_walks_and_never_raises():
    from groundrl.sim.skills import Skill
    from groundrl.sim.vocab import parse_plan

    steps = parse_plan(
        "<actions>[['Pick','Knife'], ['Cut','Bread'], ['Place','Knife','Counter']]</actions>", SCENE
    )
    assert steps[0].skill == Skill("pickup", "Knife") and steps[0].pre == (Skill("find", "Knife"),)
    assert steps[1].skill == Skill("slice", "Bread") and steps[1].pre == (Skill("find", "Bread"),)
    # after the cut, the counter holds the bread slices and the agent stands there
    assert steps[2].skill == Skill("put", "CounterTop") and steps[2].pre == ()
    assert "synonym" in steps[2].reason
    for bad in [None, 42, "", "<actions>[[</actions>", {"executable_plan": 3}, ["x" * 10_000]]:
        out = parse_plan(bad, SCENE)
        assert all(s.skill is None for s in out)
    assert "unknown vocabulary" in parse_plan(["find a Apple"], SCENE, vocab="klingon")[0].reason


def test_base_names_mean_the_slices_once_something_is_sliced():
    from groundrl.sim.skills import Skill

    env = Env(SCENE)
    for s in [("find", "Knife"), ("pickup", "Knife"), ("find", "Apple"), ("slice", "Apple")]:
        assert env.step(Skill(*s)).ok
    assert resolve("Apple", env).target == "AppleSliced"
    assert resolve("apple slice", env).target == "AppleSliced"
    assert resolve("Apple", env, prefer_sliced=False).target == "AppleSliced"  # no whole apple left
    assert resolve("Bread", env).target == "Bread"


def test_render_plan_replays_exactly_in_every_vocabulary():
    from groundrl.sim.planner import expert_plan
    from groundrl.sim.skills import Skill
    from groundrl.sim.vocab import VOCABS, format_plan, render_plan

    task = Task("s", "x", SCENE, Goal("pick_and_place_simple", "Bread", "Fridge", sliced=True))
    skills = expert_plan(task)
    eb = render_plan(skills, "eb_alfred", SCENE)
    assert "pick up the Bread" in eb and not any("Sliced" in s for s in eb)
    for v in VOCABS:
        plan = expert_plan(task, macros=v == "reinforced")
        r = execute(task, format_plan(render_plan(plan, v, SCENE), v), vocab=v)
        assert r.success and r.invalid_steps == 0 and r.steps == len(plan), (v, r.feedback)
    with pytest.raises(ValueError, match="cannot express"):
        render_plan([Skill("heat")], "eb_alfred", SCENE)
    with pytest.raises(ValueError, match="invalid when replayed"):
        render_plan([Skill("pickup", "Bread")], "eb_alfred", SCENE)


def _terse():
    """A third-party vocabulary: "!go X", "!get X", "!drop" — and nothing else."""
    from groundrl.sim.vocab import Intent, Vocabulary

    class TerseVocab(Vocabulary):
        name = "terse"
        detect_order = 5
        verbs = {"go": "find", "get": "pickup", "drop": "put"}

        def detect(self, step):
            return isinstance(step, str) and step.startswith("!")

        def parse(self, step):
            parts = str(step).lstrip("!").split(None, 1)
            verb = self.verbs.get(parts[0]) if parts else None
            if verb is None:
                return Intent(str(step), None, error="not terse")
            return Intent(step, verb, parts[1] if len(parts) > 1 else None)

        def render(self, skill, env, name, action_ids):
            back = {v: k for k, v in self.verbs.items()}
            if skill.verb not in back or (skill.verb == "put" and skill.target):
                raise ValueError(f"terse cannot express {skill}")
            return f"!{back[skill.verb]}" + (f" {name}" if skill.verb != "put" else "")

    return TerseVocab()


def test_a_registered_vocabulary_reaches_every_surface():
    from groundrl.sim.env import HouseholdEnv
    from groundrl.sim.planner import expert_plan
    from groundrl.sim.reward import sim_reward
    from groundrl.sim.vocab import (
        VOCABS,
        get_vocab,
        register_vocabulary,
        render_plan,
        unregister_vocabulary,
        vocab_names,
    )

    task = Task(
        "c", "put an apple on the table", SCENE, Goal("pick_and_place_simple", "Apple", "DiningTable")
    )
    register_vocabulary(_terse())
    try:
        # built-ins first, then the rest (an installed vocabulary plugin may sit beside terse)
        names = vocab_names()
        assert names[: len(VOCABS)] == VOCABS and "terse" in names[len(VOCABS) :]
        assert get_vocab("terse").name == "terse"
        with pytest.raises(ValueError, match="already registered"):
            register_vocabulary(_terse())
        plan = render_plan(expert_plan(task), "terse", SCENE)
        assert plan == ["!go Apple", "!get Apple", "!go DiningTable", "!drop"]
        assert detect_vocab("!go Apple") == "terse"
        r = execute(task, "\n".join(plan))  # detected, then parsed by the vocabulary object
        assert (r.success, r.vocab, r.steps, r.invalid_steps) == (True, "terse", 4, 0)
        assert sim_reward("\n".join(plan), task, vocab="terse").value == 2.0
        env = HouseholdEnv([task], vocab="terse", reward="sparse")
        env.reset(options={"task": task})
        _, reward, terminated, _, info = env.step("\n".join(plan))
        assert (reward, terminated, info["vocab"]) == (1.0, True, "terse")
    finally:
        unregister_vocabulary("terse")
    assert "terse" not in vocab_names() and detect_vocab("!go Apple") is None
    with pytest.raises(ValueError, match="unknown vocabulary 'terse'"):
        get_vocab("terse")
    with pytest.raises(ValueError, match="is a built-in vocabulary"):
        unregister_vocabulary("eb_alfred")


def test_a_station_verb_while_the_agent_stands_at_the_object_in_hand():
    # a top-level Mug found and picked up: the agent's spot is the object in hand, which
    # Env.spot answers with None; resolving "Heat" indexed type_of with it (KeyError)
    scene = Scene(
        "kitchen", [Obj("Microwave_1", "Microwave"), Obj("CounterTop_1", "CounterTop"), Obj("Mug_1", "Mug")]
    )
    task = Task("t", "heat a mug", scene, Goal("pick_heat_then_place_in_recep", "Mug", "CounterTop"))
    r = execute(task, [["Find", "Mug"], ["Pick", "Mug"], ["Heat", "Mug"], ["Place", "Mug", "CounterTop"]])
    assert (r.error, r.success, r.invalid_steps) == ("", True, 0)
