"""Task types are objects in one table (issue 23 item 5): goals, the generator, scenes,
the expert planner and reports read each type's facts from its TaskType, so a new type
built from the existing behaviours is one object plus one registration."""

from dataclasses import replace

import pytest

from groundrl.sim import execute
from groundrl.sim.generate import generate_tasks
from groundrl.sim.goals import TASK_TYPES, Goal, conditions
from groundrl.sim.report import _short
from groundrl.sim.task_types import (
    TaskType,
    get_task_type,
    inside,
    register_task_type,
    task_type_names,
    unregister_task_type,
)


def on_target_and_not_held(goal, env, objs, rok, mok):
    return [any(inside(env, o, goal.recep, rok) for o in objs), env.held is None]


STOW = TaskType(
    "stow_and_free_hands",
    "stow a {o} {prep} the {r} and keep your hands free",
    "stow",
    on_target_and_not_held,
    2,
    rooms=("bedroom",),
)


def test_the_seven_alfred_types_are_the_table_in_order():
    assert task_type_names() == TASK_TYPES
    assert [t.n_objects for t in map(get_task_type, TASK_TYPES)] == [1, 1, 1, 1, 1, 2, 1]
    assert {t.name: t.station for t in map(get_task_type, TASK_TYPES) if t.station} == {
        "pick_clean_then_place_in_recep": "SinkBasin",
        "pick_heat_then_place_in_recep": "Microwave",
        "pick_cool_then_place_in_recep": "Fridge",
    }
    with pytest.raises(ValueError, match="unknown task type 'stow_and_free_hands'"):
        Goal("stow_and_free_hands", "Book", "Shelf")
    with pytest.raises(ValueError, match="is a built-in task type"):
        unregister_task_type("pick_two_obj_and_place")


def test_a_new_task_type_is_one_object():
    register_task_type(STOW)
    try:
        assert task_type_names()[-1] == "stow_and_free_hands" and _short(STOW.name) == "stow"
        tasks = [t for t in generate_tasks(60, seed=4, subsets=["base"]) if t.task_type == STOW.name]
        assert len(tasks) >= 3  # the generator draws it like the built-ins
        for task in tasks:
            assert task.instruction.startswith("Stow a ") and task.instruction.endswith(
                "keep your hands free."
            )
            assert task.goal.n_conditions() == 2 and task.scene.room == "bedroom"
            env = task.env()
            assert conditions(task.goal, env) == [False, True]  # the type's own conditions
            result = execute(task, task.gold_plan)  # the expert planner solved it at generation
            assert result.success and result.progress == 1.0, (task.instruction, task.gold_plan)
        assert register_task_type(STOW) is STOW  # the same object again: a no-op
        with pytest.raises(ValueError, match="already registered"):
            register_task_type(replace(STOW, label="another"))
    finally:
        unregister_task_type(STOW.name)
    assert STOW.name not in task_type_names()
