"""ALFRED goal conditions and progress for every task type, on hand-built states."""

import pytest

from groundrl.sim.goals import TASK_TYPES, Goal, conditions, progress, satisfied
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Obj, Scene


def run(env, *steps):
    for s in steps:
        r = env.step(Skill(*s))
        assert r.ok, (s, r.feedback)
    return env


def kitchen():
    return Env(
        Scene(
            "kitchen",
            [
                Obj("CounterTop_1", "CounterTop"),
                Obj("DiningTable_1", "DiningTable"),
                Obj("SideTable_1", "SideTable"),
                Obj("Fridge_1", "Fridge"),
                Obj("Microwave_1", "Microwave"),
                Obj("SinkBasin_1", "SinkBasin"),
                Obj("Faucet_1", "Faucet", "SinkBasin_1"),
                Obj("Apple_1", "Apple", "CounterTop_1"),
                Obj("Apple_2", "Apple", "DiningTable_1"),
                Obj("Knife_1", "Knife", "CounterTop_1"),
                Obj("Bowl_1", "Bowl", "SideTable_1"),
                Obj("DeskLamp_1", "DeskLamp", "SideTable_1"),
            ],
        ),
        max_steps=100,
    )


def test_condition_counts_follow_alfred():
    base = {
        "pick_and_place_simple": 1,
        "look_at_obj_in_light": 2,
        "pick_two_obj_and_place": 2,
        "pick_clean_then_place_in_recep": 3,
        "pick_heat_then_place_in_recep": 3,
        "pick_cool_then_place_in_recep": 3,
        "pick_and_place_with_movable_recep": 3,
    }
    assert set(base) == set(TASK_TYPES)
    env = kitchen()
    for tt, n in base.items():
        g = Goal(tt, "Apple", "Fridge", "Bowl")
        assert g.n_conditions() == n == len(conditions(g, env))
        gs = Goal(tt, "Apple", "Fridge", "Bowl", sliced=True)
        # ALFRED: +1 for a sliced object, +2 for two sliced objects (min(#slices, 2))
        extra = 2 if tt == "pick_two_obj_and_place" else 1
        assert gs.n_conditions() == n + extra == len(conditions(gs, env))


def test_bad_goals_raise():
    with pytest.raises(ValueError, match="unknown task type"):
        Goal("make_coffee", "Mug", "CounterTop")
    with pytest.raises(ValueError, match="mrecep"):
        Goal("pick_and_place_with_movable_recep", "Apple", "CounterTop")


def test_pick_and_place_simple():
    g = Goal("pick_and_place_simple", "Apple", "SideTable")
    env = kitchen()
    assert progress(g, env) == (0, 1)
    run(env, ("find", "Apple"), ("pickup", "Apple"), ("find", "SideTable"), ("put",))
    assert progress(g, env) == (1, 1) and satisfied(g, env)


def test_in_means_directly_in():
    # an apple in a bowl on the side table is in the bowl, not on the side table
    g = Goal("pick_and_place_simple", "Apple", "SideTable")
    env = run(kitchen(), ("find", "Apple"), ("pickup", "Apple"), ("find", "Bowl"), ("put",))
    assert env.parent["Apple_1"] == "Bowl_1" and progress(g, env) == (0, 1)


def test_look_at_obj_in_light_needs_object_in_hand_and_lamp_on_here():
    g = Goal("look_at_obj_in_light", "Apple", "DeskLamp")
    env = run(kitchen(), ("find", "DeskLamp"), ("toggle_on", "DeskLamp"))
    assert conditions(g, env) == [False, True]
    run(env, ("find", "Apple"), ("pickup", "Apple"))
    assert conditions(g, env) == [True, False]  # the lamp is on but not where the agent is
    run(env, ("find", "DeskLamp"))
    assert progress(g, env) == (2, 2)


@pytest.mark.parametrize(
    "tt, steps",
    [
        (
            "pick_heat_then_place_in_recep",
            [
                ("find", "Microwave"),
                ("open", "Microwave"),
                ("put",),
                ("close", "Microwave"),
                ("toggle_on", "Microwave"),
            ],
        ),
        (
            "pick_cool_then_place_in_recep",
            [("find", "Fridge"), ("open", "Fridge"), ("put",), ("close", "Fridge")],
        ),
        ("pick_clean_then_place_in_recep", [("find", "SinkBasin"), ("put",), ("toggle_on", "Faucet")]),
    ],
)
def test_state_then_place(tt, steps):
    g = Goal(tt, "Apple", "SideTable")
    env = run(kitchen(), ("find", "Apple"), ("pickup", "Apple"), ("find", "SideTable"), ("put",))
    # [in the receptacle, in the state, both] — placed but not yet in the state
    assert conditions(g, env) == [True, False, False]
    run(env, ("pickup", "Apple"), *steps)
    assert conditions(g, env) == [False, True, False]
    if tt != "pick_clean_then_place_in_recep":
        run(env, ("open", steps[0][1]))
    run(env, ("pickup", "Apple"), ("find", "SideTable"), ("put",))
    assert conditions(g, env) == [True, True, True]


def test_state_conditions_can_come_from_different_objects():
    g = Goal("pick_cool_then_place_in_recep", "Apple", "DiningTable")
    env = run(kitchen(), ("find", "Apple"), ("pickup", "Apple"), ("find", "Fridge"), ("open", "Fridge"))
    run(env, ("put",), ("close", "Fridge"))
    # Apple_2 starts on the dining table; Apple_1 is cool in the fridge
    assert conditions(g, env) == [True, True, False] and progress(g, env) == (2, 3)


def test_pick_two_counts_objects_in_one_receptacle_instance():
    scene = Scene(
        "kitchen",
        [
            Obj("Shelf_1", "Shelf"),
            Obj("Shelf_2", "Shelf"),
            Obj("CounterTop_1", "CounterTop"),
            Obj("Mug_1", "Mug", "Shelf_1"),
            Obj("Mug_2", "Mug", "Shelf_2"),
        ],
    )
    g = Goal("pick_two_obj_and_place", "Mug", "Shelf")
    env = Env(scene)
    assert conditions(g, env) == [True, False]  # one mug on each shelf is not two on a shelf
    run(env, ("find", "Mug_2"), ("pickup", "Mug"), ("find", "Shelf_1"), ("put",))
    assert progress(g, env) == (2, 2)


def test_movable_receptacle():
    g = Goal("pick_and_place_with_movable_recep", "Apple", "DiningTable", "Bowl")
    env = kitchen()
    assert progress(g, env) == (0, 3)
    run(env, ("find", "Apple"), ("pickup", "Apple"), ("find", "Bowl"), ("put",))
    assert conditions(g, env) == [True, False, False]
    run(env, ("pickup", "Bowl"), ("find", "DiningTable"), ("put",))
    assert conditions(g, env) == [True, True, True]


def test_sliced_goals():
    g = Goal("pick_and_place_simple", "Apple", "SideTable", sliced=True)
    env = run(kitchen(), ("find", "Apple"), ("pickup", "Apple"), ("find", "SideTable"), ("put",))
    assert conditions(g, env) == [False, False]  # a whole apple is not a slice
    run(env, ("find", "Knife"), ("pickup", "Knife"), ("find", "SideTable"), ("slice", "Apple"))
    # slicing in place: the slices lie on the side table
    assert conditions(g, env) == [True, True]
    two = Goal("pick_two_obj_and_place", "Apple", "SideTable", sliced=True)
    assert progress(two, env) == (4, 4)  # one apple gives three slices


def test_obj_id_asks_for_one_instance():
    g = Goal("pick_and_place_simple", "Apple", "SideTable", obj_id="Apple_2")
    env = run(kitchen(), ("find", "Apple"), ("pickup", "Apple"), ("find", "SideTable"), ("put",))
    assert env.parent["Apple_1"] == "SideTable_1" and progress(g, env) == (0, 1)
    run(env, ("find", "DiningTable"), ("pickup", "Apple"), ("find", "SideTable"), ("put",))
    assert progress(g, env) == (1, 1)
    assert (
        Goal.from_json(g.to_json()) == g and "obj_id" not in Goal("pick_and_place_simple", "A", "B").to_json()
    )


def test_progress_accepts_a_task():
    from groundrl.sim.tasks import Task
    from groundrl.sim.tasks import progress as task_progress

    env = kitchen()
    t = Task("t", "x", env.scene, Goal("pick_and_place_simple", "Apple", "DiningTable"))
    assert task_progress(t, env) == (1, 1) and satisfied(t, env)


def test_with_refs_replaces_the_roles_it_names_and_keeps_the_others():
    from groundrl.sim.refs import Ref

    yellow, red = Ref((("color", "yellow"),)), Ref((("color", "red"),))
    g = Goal("pick_and_place_simple", "Apple", "Fridge", recep_ref=red)
    h = g.with_refs({"obj": yellow})
    assert (h.obj_ref, h.recep_ref, h.mrecep_ref) == (yellow, red, None)
    assert g.with_refs({"recep": None}).recep_ref is None
    with pytest.raises(ValueError, match="obj_ref"):
        g.with_refs({"obj_ref": yellow})
