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
