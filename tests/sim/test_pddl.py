"""Our engine and unified-planning's sequential plan validator agree on valid and invalid plans."""

import pytest

pytest.importorskip("unified_planning")

from pddl_oracle import nested_ok, supported, translate, validate  # noqa: E402

from groundrl.sim.generate import generate_tasks  # noqa: E402
from groundrl.sim.planner import expert_plan  # noqa: E402
from groundrl.sim.skills import Skill  # noqa: E402
from groundrl.sim.world import Obj, Scene  # noqa: E402


def exported_tasks(n=40):
    return [
        t for t in generate_tasks(n, seed=0, subsets=["base"]) if supported(t.goal) and nested_ok(t.scene)
    ]


def test_expert_plans_validate():
    tasks = exported_tasks()
    assert len(tasks) >= 8
    for t in tasks:
        ok, why = validate(t.scene, t.goal, expert_plan(t))
        assert ok, (t.id, why)


SCENE = Scene(
    "kitchen",
    [
        Obj("Fridge_1", "Fridge"),
        Obj("CounterTop_1", "CounterTop"),
        Obj("Apple_1", "Apple", "CounterTop_1"),
        Obj("Mug_1", "Mug", "CounterTop_1"),
    ],
)


@pytest.mark.parametrize(
    "plan",
    [
        [Skill("pickup", "Apple")],  # not near it yet
        [
            Skill("find", "Apple"),
            Skill("pickup", "Apple"),
            Skill("find", "Fridge"),
            Skill("put"),
        ],  # closed fridge
        [Skill("find", "Apple"), Skill("pickup", "Apple"), Skill("pickup", "Mug")],  # hand full
    ],
)
def test_invalid_plans_rejected_by_both(plan):
    from groundrl.sim.goals import Goal

    goal = Goal("pick_and_place_simple", "Apple", "Fridge")
    _, env = translate(SCENE, plan)
    assert env.invalid_steps >= 1
    ok, _ = validate(SCENE, goal, plan)
    assert not ok


def test_valid_hand_plan_accepted_by_both():
    from groundrl.sim.goals import Goal

    plan = [
        Skill("find", "Apple"),
        Skill("pickup", "Apple"),
        Skill("find", "Fridge"),
        Skill("open", "Fridge"),
        Skill("put"),
    ]
    _, env = translate(SCENE, plan)
    assert env.invalid_steps == 0
    assert validate(SCENE, Goal("pick_and_place_simple", "Apple", "Fridge"), plan)[0]


@pytest.mark.parametrize(
    "step",
    [
        Skill("find", "Banana"),
        Skill("pickup", "Banana"),
        Skill("open", "Banana"),
        Skill("toggle_on", "DeskLamp"),
        Skill("put"),
    ],
)
def test_a_step_on_an_object_the_scene_lacks_is_rejected(step):
    # translate named such a step's object None.lower() (AttributeError) and validate
    # raised on the undeclared 'nothing' of an empty-handed put
    from groundrl.sim.goals import Goal

    actions, env = translate(SCENE, [step])
    assert env.invalid_steps == 1
    assert "nothing" in actions[0].split()[1]
    ok, why = validate(SCENE, Goal("pick_and_place_simple", "Apple", "Fridge"), [step])
    assert not ok
    assert "nothing" in why
