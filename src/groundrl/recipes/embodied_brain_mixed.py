"""EmbodiedBrain's mixed RL corpus: a task-type reward router (``embodied_brain`` with
the option ``router=true``, e.g. ``-O router=true`` or ``recipe_options: {router: true}``).

Each sample's ``task_type`` selects its reward parts; a part returns "not applicable"
(``None``, ignored by TRL's weighted ``nansum`` and by the per-part means) for samples of
other types, so ``rewards/<part>/mean`` is the per-type reward in TRL's logs (planning keeps the
``embodied_brain`` part names ``format``, ``grm``, ``plan_f1``; the others are ``<type>.<reward>``).

| ``task_type`` | fields | parts (weight) |
|---|---|---|
| ``planning`` | ``gold`` (a completion with ``<actions>``), ``question``? | ``format`` (rule reward, 1.0; 0.2 with a judge), ``grm`` (planning GRM, 0.8, with a judge: the released 0.8 GRM + 0.2 rule), ``plan_f1`` (metric, 0) |
| ``spatial_mcq`` | ``answer`` (a letter, word or sentence) | ``spatial_mcq.accuracy`` (:func:`~groundrl.rewards.spatial.spatial_mcq_reward`: strictness by answer form, verbosity penalised) |
| ``spatial_descriptive`` | ``answer`` | ``spatial_descriptive.accuracy`` (:func:`~groundrl.rewards.spatial.spatial_descriptive_reward`: relation synonyms, antonym and subject/object swaps, verbosity penalised; else exact / numeric 5%, with a judge semantic equivalence) |
| ``detection`` | ``boxes`` (gold boxes) | ``detection.iou`` (:func:`~groundrl.rewards.perception.detection_reward`) |
| ``counting`` | ``answer`` (an int) | ``counting.accuracy`` (:func:`~groundrl.rewards.perception.counting_reward`) |
| ``instruction`` | ``answer`` | ``instruction.accuracy`` (as descriptive; our choice — the paper names the task, not its reward) |

A sample whose ``task_type`` is missing or not in the table, or that lacks its type's
field, is an error when the data is loaded (:meth:`RouterRubric.check_samples`, called by
``groundrl train`` before any model is built).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from groundrl.rewards.outcome import outcome
from groundrl.rewards.perception import counting_reward, detection_reward
from groundrl.rewards.planning import DEFAULT_ATOMIC_ACTIONS, embodied_format, plan_f1
from groundrl.rewards.spatial import spatial_descriptive_reward, spatial_mcq_reward
from groundrl.rubric import Part, Rubric
from groundrl.types import Score

# task type -> the field its rewards need
TASK_FIELDS: dict[str, str] = {
    "planning": "gold",
    "spatial_mcq": "answer",
    "spatial_descriptive": "answer",
    "detection": "boxes",
    "counting": "answer",
    "instruction": "answer",
}


class RouterRubric(Rubric):
    """A rubric whose parts each serve one ``task_type``; checks a data set up front."""

    def check_samples(self, samples: Sequence[Mapping[str, Any]]) -> None:
        bad: list[str] = []
        for i, s in enumerate(samples, start=1):
            t = s.get("task_type")
            if t not in TASK_FIELDS:
                bad.append(f"record {i}: task_type {t!r} has no reward (known: {', '.join(TASK_FIELDS)})")
            elif s.get(TASK_FIELDS[t]) is None:
                bad.append(f"record {i}: task_type {t!r} needs field {TASK_FIELDS[t]!r}")
            if len(bad) >= 5:
                break
        if bad:
            raise ValueError("; ".join(bad))


def _routed(task: str, name: str, fn: Callable[[Any, Any], Score]) -> Part:
    """A part for one task type; the rubric injects ``task_type`` and the type's field."""
    field = TASK_FIELDS[task]
    # built once (a Score is frozen): six of the seven parts answer one of these per sample
    not_mine = Score(name, None, f"not a {task} sample")
    no_field = Score(name, None, f"no {field} in the sample")

    def run(completion: Any, task_type: Any, value: Any) -> Score:
        if task_type != task:
            return not_mine
        if value is None:
            return no_field
        s = fn(completion, value)
        return Score(name, s.value, s.reason)

    # the parameter's name is the sample field the rubric injects
    def with_gold(completion: Any, task_type: Any = None, gold: Any = None) -> Score:
        return run(completion, task_type, gold)

    def with_boxes(completion: Any, task_type: Any = None, boxes: Any = None) -> Score:
        return run(completion, task_type, boxes)

    def with_answer(completion: Any, task_type: Any = None, answer: Any = None) -> Score:
        return run(completion, task_type, answer)

    part = {"gold": with_gold, "boxes": with_boxes}.get(field, with_answer)
    return Part(name, part, fallback=None, value_range=(0.0, 1.0))


def build(atomic_actions: Any = None, judge: Any = None) -> RouterRubric:
    if isinstance(atomic_actions, str):
        raise ValueError("atomic_actions must be a collection of verbs, not one string")
    verbs = frozenset(atomic_actions) if atomic_actions is not None else DEFAULT_ATOMIC_ACTIONS
    semantic = getattr(judge, "semantic", None)

    def answer(completion: Any, gold: Any) -> Score:
        return outcome(completion, gold, semantic=semantic)

    def descriptive(completion: Any, gold: Any) -> Score:
        return spatial_descriptive_reward(completion, gold, semantic=semantic)

    parts = [
        _routed("planning", "format", lambda c, gold: embodied_format(c, verbs)),
        _routed("planning", "plan_f1", plan_f1),
        _routed("spatial_mcq", "spatial_mcq.accuracy", spatial_mcq_reward),
        _routed("spatial_descriptive", "spatial_descriptive.accuracy", descriptive),
        _routed("detection", "detection.iou", detection_reward),
        _routed("counting", "counting.accuracy", counting_reward),
        _routed("instruction", "instruction.accuracy", answer),
    ]
    parts[0].weight = 0.2 if judge is not None else 1.0
    parts[1].weight = 0.0
    if judge is not None:
        grm = getattr(judge, "grm", judge)
        if atomic_actions is not None:
            grm.atomic_actions = tuple(verbs)

        def grm_batch(completions: Sequence[Any], samples: Sequence[Mapping[str, Any]]) -> list[Score]:
            idx = [i for i, s in enumerate(samples) if s.get("task_type") == "planning"]
            out: list[Score] = [Score("grm", None, "not a planning sample")] * len(samples)
            if idx:
                got = grm.reward_batch([completions[i] for i in idx], [samples[i] for i in idx])
                for i, s in zip(idx, got, strict=True):
                    out[i] = Score("grm", s.value, s.reason)
            return out

        parts.append(Part("grm", grm_batch, weight=0.8, batched=True, fallback=0.0, value_range=(0.0, 1.0)))
    return RouterRubric(parts, name="embodied_brain_mixed")
