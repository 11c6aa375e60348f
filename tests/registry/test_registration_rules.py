"""One registration style (issue 23 item 3): recipes, stage kinds, vocabularies and task
types take their object plus ``replace=`` under the same rules and the same wording: a
built-in is never replaced nor removed, another object under a taken name raises unless
``replace=True``, the same object again is a no-op."""

from dataclasses import replace as copy_with

import pytest

from groundrl.recipes import get_recipe, recipe_names, register, unregister
from groundrl.recipes.base import Recipe
from groundrl.rubric import Part, Rubric
from groundrl.sim.task_types import get_task_type, register_task_type, task_type_names, unregister_task_type
from groundrl.sim.vocab_registry import get_vocab, register_vocabulary, unregister_vocabulary, vocab_names
from groundrl.sim.vocabularies import Reinforced
from groundrl.train.stage_kinds import StageKind, get_stage_kind, register_stage_kind, stage_kinds
from groundrl.train.stage_kinds import unregister_stage_kind as unregister_kind


def _recipe(name):
    return Recipe(name=name, paper="p", summary="s", build=lambda: Rubric([Part("x", lambda c: 1.0)]))


def _vocab(name):
    v = Reinforced()
    v.name = name
    return v


# kind -> (register, unregister, look-up, names, make a new object named n, a built-in's name)
REGISTRIES = {
    "recipe": (register, unregister, get_recipe, recipe_names, _recipe, "eqa_rm"),
    "stage kind": (
        register_stage_kind,
        unregister_kind,
        get_stage_kind,
        stage_kinds,
        lambda n: StageKind(n, "groundrl.train.stages:run_sft_stage", trainer="sft"),
        "grpo",
    ),
    "vocabulary": (register_vocabulary, unregister_vocabulary, get_vocab, vocab_names, _vocab, "reinforced"),
    "task type": (
        register_task_type,
        unregister_task_type,
        get_task_type,
        task_type_names,
        lambda n: copy_with(get_task_type("pick_and_place_simple"), name=n),
        "pick_and_place_simple",
    ),
}


@pytest.mark.parametrize("kind", list(REGISTRIES))
def test_every_registry_follows_the_same_rules(kind):
    add, remove, get, names, make, builtin = REGISTRIES[kind]
    name = "t_rules_" + kind.replace(" ", "_")
    first, second = make(name), make(name)
    try:
        assert add(first) is first and get(name) is first and name in names()
        assert add(first) is first and get(name) is first  # the same object again: a no-op
        with pytest.raises(ValueError) as e:
            add(second)
        assert str(e.value) == (
            f"a {kind} named {name!r} is already registered; pass replace=True to swap it for yours"
        )
        assert get(name) is first
        assert add(second, replace=True) is second and get(name) is second
    finally:
        remove(name)
    assert name not in names()
    remove(name)  # forgetting a name that is not there is fine
    original = get(builtin)
    for kw in ({}, {"replace": True}):  # a built-in is never replaced, replace=True or not
        with pytest.raises(ValueError) as e:
            add(make(builtin), **kw)
        assert str(e.value) == f"{builtin!r} is a built-in {kind}; give yours another name"
    assert add(original) is original and get(builtin) is original  # itself again: a no-op
    with pytest.raises(ValueError) as e:
        remove(builtin)
    assert str(e.value) == f"{builtin!r} is a built-in {kind}; it cannot be unregistered"
    assert get(builtin) is original


def test_a_stage_kind_registers_as_an_object_or_by_keywords():
    kind = StageKind("t_obj", "groundrl.train.stages:run_sft_stage", trainer="sft", doc="d")
    try:
        assert register_stage_kind(kind) is kind and get_stage_kind("t_obj") is kind
        by_keywords = register_stage_kind(
            "t_kw", "groundrl.train.stages:run_sft_stage", trainer="sft", doc="d", replace=True
        )
        assert by_keywords == StageKind("t_kw", "groundrl.train.stages:run_sft_stage", "sft", {}, doc="d")
        assert get_stage_kind("t_kw") is by_keywords
        with pytest.raises(TypeError, match="takes no runner"):
            register_stage_kind(kind, "groundrl.train.stages:run_sft_stage")
        with pytest.raises(TypeError, match="a StageKind, or a name and a runner"):
            register_stage_kind("t_none")
        with pytest.raises(ValueError, match="trainer must be one of grpo, sft or None"):
            register_stage_kind(StageKind("t_bad", "m:f", trainer="ppo"))
    finally:
        unregister_kind("t_obj")
        unregister_kind("t_kw")
    assert not {"t_obj", "t_kw", "t_bad"} & set(stage_kinds())
