"""EmbodiedBrain: ``<response>…</response><plans>…</plans><actions>[[…]]</actions>``.

Parts: ``format`` (the rule reward ``0.2·response + 0.3·plan types + 0.5·action
validity``, :func:`groundrl.rewards.planning.embodied_format`), and, when the sample
carries a gold completion in ``gold``, the zero-weight metrics ``plan_f1`` (quantity
F1) and ``plan_order_f1`` (LCS order F1). With a judge configured, ``grm`` (the
planning generative reward model) is added at weight 0.8 beside ``format`` at 0.2, as in
the paper's RL stage; without one the rule reward stands alone at weight 1.
With ``router=true`` the rubric is the task-type router of EmbodiedBrain's mixed corpus
(:mod:`groundrl.recipes.embodied_brain_mixed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groundrl.examples import bundled
from groundrl.judges.papers import ArgosTeachers, PlanningGRM
from groundrl.recipes.base import Recipe
from groundrl.recipes.embodied_brain_mixed import build as build_router
from groundrl.recipes.options import Option
from groundrl.rewards.planning import DEFAULT_ATOMIC_ACTIONS, embodied_format, plan_f1, plan_order_f1
from groundrl.rubric import Part, Rubric
from groundrl.types import Score


def _metric(fn: Callable[[Any, Any], Score], name: str) -> Callable[..., Score]:
    def part(completion: Any, gold: Any = None) -> Score:
        if gold is None:
            return Score(name, None, "no gold completion")
        return fn(completion, gold)

    return part


def _judge(backend: Any, sampling: Any) -> Any:
    grm = PlanningGRM(backend, sampling)
    # the task-type router's descriptive / instruction answers use semantic matching
    grm.semantic = ArgosTeachers(backend, sampling).semantic
    return grm


def build(atomic_actions: Any = None, judge: Any = None, router: bool = False) -> Rubric:
    if router:
        return build_router(atomic_actions, judge)
    if isinstance(atomic_actions, str):
        raise ValueError("atomic_actions must be a collection of verbs, not one string")
    verbs = frozenset(atomic_actions) if atomic_actions is not None else DEFAULT_ATOMIC_ACTIONS
    parts = [
        Part(
            "format",
            lambda completion: embodied_format(completion, verbs),
            weight=0.2 if judge else 1.0,
            value_range=(0.0, 1.0),
        ),
        Part("plan_f1", _metric(plan_f1, "plan_f1"), weight=0.0, value_range=(0.0, 1.0)),
        Part("plan_order_f1", _metric(plan_order_f1, "plan_order_f1"), weight=0.0, value_range=(0.0, 1.0)),
    ]
    if judge is not None:
        if atomic_actions is not None and hasattr(judge, "atomic_actions"):
            judge.atomic_actions = tuple(verbs)  # the GRM's prompt lists the same verbs
        parts.append(judge.as_part("grm", weight=0.8))
    return Rubric(parts, name="embodied_brain")


RECIPE = Recipe(
    name="embodied_brain",
    paper="EmbodiedBrain",
    summary="<response><plans><actions> rule format reward; plan P/R/F1 metrics against a gold completion",
    build=build,
    optional=("gold",),
    label_field="gold",
    options=(
        Option("atomic_actions", "list", None, "the atomic action verbs (default: the paper's 57)"),
        Option("judge", "judge", None, "planning GRM judge: adds part grm (weight 0.8; format drops to 0.2)"),
        Option(
            "router",
            "bool",
            False,
            "mixed corpus: each sample's task_type (planning, spatial_mcq, spatial_descriptive, detection, "
            "counting, instruction) selects its reward parts (format/grm/plan_f1 for planning, <type>.<reward> otherwise)",
        ),
    ),
    judge_factory=_judge,
    judge_parts=("grm",),
    examples=bundled("embodied_brain"),
    gold_example="eb-gold",
    probe_exempt={
        "overflow_length": "no length term in the rule or GRM reward [EmbodiedBrain §4.2]",
        "repeat_tags": "the rule format reward passes a repeated block; redundancy is the GRM's "
        "criterion [EmbodiedBrain §9.2.4] (needs judge=)",
    },
)
