"""Each vocabulary owns splitting its plan format (issue 40 item 4): a made-up vocabulary
whose plans come as ``PLAN[go:Apple | get:Apple | …]`` on one line registers a
``split`` and every surface (split_plan, parse_plan, execute) reads it, with no edit in
``sim/vocab.py``; and a step form it ``owns`` is read by it whatever the plan declares.
Before, ``split_plan`` hard-coded ``<actions>`` / ``executable_plan`` and read any other
text one step per line, so this plan was one unreadable step."""

from __future__ import annotations

import re

import pytest

from groundrl.sim.execute import execute
from groundrl.sim.goals import Goal
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import (
    Intent,
    Vocabulary,
    parse_plan,
    register_vocabulary,
    split_plan,
    to_intent,
    unregister_vocabulary,
)
from groundrl.sim.world import Obj, Scene

SCENE = Scene(
    "kitchen",
    [Obj("CounterTop_1", "CounterTop"), Obj("Fridge_1", "Fridge"), Obj("Apple_1", "Apple", "CounterTop_1")],
)
PLAN_RE = re.compile(r"PLAN\[([^\]]*)\]")


class Colon(Vocabulary):
    """Steps ``verb:Object``; a plan is ``PLAN[step | step | …]`` anywhere in the text."""

    name = "t_colon"
    verbs = {"go": "find", "get": "pickup", "open": "open", "close": "close", "drop": "put"}

    def detect(self, step):
        return isinstance(step, str) and ":" in step and step.split(":")[0] in self.verbs

    def parse(self, step):
        verb, _, obj = str(step).partition(":")
        if verb not in self.verbs:
            return Intent(str(step), None, error="not a colon step")
        if verb == "drop":
            return Intent(step, "put", None, obj or None)
        return Intent(step, self.verbs[verb], obj or None)

    def split(self, plan):
        m = PLAN_RE.search(plan) if isinstance(plan, str) else None
        if m is None:
            return None
        return [s.strip() for s in m.group(1).split("|") if s.strip()], self.name, ""

    def owns(self, step):
        return isinstance(step, str) and step.startswith("colon!")


@pytest.fixture
def colon():
    vocab = register_vocabulary(Colon())
    yield vocab
    unregister_vocabulary("t_colon")


TEXT = "I will store it.\nPLAN[go:Apple | get:Apple | go:Fridge | open:Fridge | drop:Fridge]\nDone."


def test_a_registered_vocabulary_splits_its_own_plan_format(colon):
    steps, vocab, err = split_plan(TEXT)
    assert (steps, vocab, err) == (
        ["go:Apple", "get:Apple", "go:Fridge", "open:Fridge", "drop:Fridge"],
        "t_colon",
        "",
    )
    parsed = parse_plan(TEXT, SCENE)
    assert all(p.ok for p in parsed) and [p.skill.verb for p in parsed] == [
        "find",
        "pickup",
        "find",
        "open",
        "put",
    ]
    task = Task("c", "put an apple in the fridge", SCENE, Goal("pick_and_place_simple", "Apple", "Fridge"))
    r = execute(task, TEXT)
    assert (r.success, r.vocab, r.invalid_steps) == (True, "t_colon", 0)


def test_without_the_vocabulary_the_text_is_read_line_by_line():
    steps, _, _ = split_plan(TEXT)
    assert len(steps) == 3 and steps[1].startswith("PLAN[")


def test_a_step_a_vocabulary_owns_is_read_by_it_whatever_the_plan_says(colon):
    assert to_intent("colon!", "eb_alfred").error == "not a colon step"  # read by t_colon
    assert (
        to_intent({"discrete_action": {"action": "PickupObject", "args": ["apple"]}}, "eb_alfred").verb
        == "pickup"
    )


def test_the_builtin_formats_are_still_their_vocabularies():
    assert split_plan("<actions>[['Find','Apple'], ['Pick','Apple']]</actions>")[1:] == ("embodied_brain", "")
    assert split_plan("<actions>[['Find'</actions>")[1] == "embodied_brain"
    assert split_plan("<actions>[['Find'</actions>")[2].startswith("<actions> unreadable")
    js = '{"executable_plan": [{"action_id": 3, "action_name": "find a Apple"}]}'
    assert split_plan(js) == (["find a Apple"], "eb_alfred", "")
    assert split_plan({"executable_plan": [{"action_id": 3}]}, action_map={3: "pick up the Apple"}) == (
        ["pick up the Apple"],
        "eb_alfred",
        "",
    )
    assert split_plan('x {"action_id": 1, "action_name": "find a Apple"} {"action_id": 2 "a": 1}')[0] == [
        "find a Apple"
    ]
