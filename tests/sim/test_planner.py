"""The expert planner returns valid, shortest plans (hand-counted lengths, and the same
lengths as an uninformed breadth-first search)."""

import pytest

from groundrl.sim import planner
from groundrl.sim.goals import Goal, satisfied
from groundrl.sim.planner import expert_plan
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Obj, Scene


def scene(*extra):
    return Scene(
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
            *extra,
        ],
    )


def replay(sc, goal, plan):
    env = Env(sc, max_steps=100)
    assert all(env.step(s).ok for s in plan), plan
    return satisfied(goal, env)


# Shortest lengths counted by hand, e.g. heat: find Apple, pick up, find Microwave, open,
# put, close, turn on, open, pick up, find DiningTable, put = 11.
@pytest.mark.parametrize(
    "goal, extra, n, n_macro",
    [
        (Goal("pick_and_place_simple", "Apple", "Fridge"), [], 5, 4),
        (Goal("pick_heat_then_place_in_recep", "Apple", "DiningTable"), [], 11, 6),
        (Goal("pick_cool_then_place_in_recep", "Apple", "DiningTable"), [], 10, 6),
        (Goal("pick_clean_then_place_in_recep", "Apple", "DiningTable"), [], 8, 6),
        (
            Goal("pick_two_obj_and_place", "Apple", "DiningTable"),
            [Obj("Apple_2", "Apple", "SideTable_1")],
            8,
            8,
        ),
        (
            Goal("pick_and_place_with_movable_recep", "Apple", "SideTable", "Bowl"),
            [Obj("Bowl_1", "Bowl", "DiningTable_1")],
            7,
            7,
        ),
        (
            # find Knife, pick up, find Apple, slice, put the knife down, pick up a slice,
            # find Fridge, open, put = 9
            Goal("pick_and_place_simple", "Apple", "Fridge", sliced=True),
            [Obj("Knife_1", "Knife", "DiningTable_1")],
            9,
            8,
        ),
        (
            Goal("look_at_obj_in_light", "Apple", "DeskLamp"),
            [Obj("DeskLamp_1", "DeskLamp", "SideTable_1")],
            4,
            4,
        ),
    ],
)
def test_hand_counted_shortest_plans(goal, extra, n, n_macro):
    sc = scene(*extra)
    plan = expert_plan(goal, sc)
    assert len(plan) == n and replay(sc, goal, plan), [str(s) for s in plan]
    macro = expert_plan(goal, sc, macros=True)
    env = Env(sc, max_steps=100, auto_open=True)
    assert all(env.step(s).ok for s in macro) and satisfied(goal, env)
    assert len(macro) == n_macro, [str(s) for s in macro]
    assert not {s.verb for s in macro} & {"open", "close"}


def test_distractors_do_not_change_the_plan():
    goal = Goal("pick_heat_then_place_in_recep", "Apple", "DiningTable")
    noisy = scene(*[Obj(f"{t}_1", t, "CounterTop_1") for t in ("Mug", "Bread", "Spatula", "Egg", "Cup")])
    assert expert_plan(goal, noisy) == expert_plan(goal, scene())


def test_plans_from_a_live_env_without_changing_it():
    goal = Goal("pick_and_place_simple", "Apple", "Fridge")
    env = Env(scene(Obj("Mug_1", "Mug", "DiningTable_1")))
    for s in [Skill("find", "Mug"), Skill("pickup", "Mug"), Skill("find", "Fridge"), Skill("open", "Fridge")]:
        env.step(s)
    before = env.state_json()
    plan = expert_plan(goal, env)
    assert env.state_json() == before
    # put the mug down, find Apple, pick up, find Fridge, put = 5 (in some order)
    assert len(plan) == 5 and Skill("put") in plan[:2]
    for s in plan:
        assert env.step(s).ok
    assert satisfied(goal, env)


def test_unsolvable_gives_none_and_solved_gives_empty():
    assert expert_plan(Goal("pick_and_place_simple", "Apple", "Toilet"), scene()) is None
    assert expert_plan(Goal("pick_and_place_simple", "Banana", "Fridge"), scene()) is None
    assert expert_plan(Goal("pick_and_place_simple", "Apple", "CounterTop"), scene()) == []
    # too deep for the depth limit
    assert (
        expert_plan(Goal("pick_heat_then_place_in_recep", "Apple", "DiningTable"), scene(), max_depth=5)
        is None
    )


def _bfs_len(goal, sc, macros=False):
    """Breadth-first (the heuristic replaced by 0): shortest by construction."""
    real = planner._h
    planner._h = lambda env, ctx: 0
    try:
        plan = planner.expert_plan(goal, sc, macros=macros, max_nodes=300_000)
    finally:
        planner._h = real
    return None if plan is None else len(plan)


@pytest.mark.slow
def test_a_star_matches_breadth_first_search_on_generated_tasks():
    from groundrl.sim.generate import generate_tasks

    tasks = generate_tasks(12, seed=11)
    for t in tasks:
        for macros in (False, True):
            a = expert_plan(t, macros=macros)
            assert a is not None and len(a) == _bfs_len(t.goal, t.scene, macros), (t.id, t.goal, macros)
