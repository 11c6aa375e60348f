"""The papers' rule rewards: pure, total functions ``(completion, …) -> Score``.

Imported lazily by name, so ``from groundrl.rewards import eqa_accuracy`` loads only
the module that defines it:

>>> from groundrl.rewards import eqa_accuracy
>>> eqa_accuracy("<critique>ok</critique><score>7</score>", 5).value
0.96
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    # Reinforced Reasoning for Embodied Planning, EmbodiedBrain
    "load_action_map": "planning",
    "reinforced_format": "planning",
    "reinforced_accuracy": "planning",
    "embodied_format": "planning",
    "plan_f1": "planning",
    "plan_order_f1": "planning",
    "planning_scores": "planning",
    "canonical_actions": "planning",
    # EQA-RM
    "score_accuracy": "critique_score",
    "eqa_format": "critique_score",
    "eqa_accuracy": "critique_score",
    "contrastive_boost": "critique_score",
    "combine_boosts": "critique_score",
    "within_tolerance": "critique_score",
    "accuracy_within": "critique_score",
    "rmse": "critique_score",
    # Proxy-GRM
    "proxy_format": "preference",
    "proxy_accuracy": "preference",
    "rubric_text": "preference",
    # Argos
    "outcome": "outcome",
    "numeric_match": "outcome",
    "answer_type": "outcome",
    "spatial": "grounding",
    "masks_from_boxes": "grounding",
    # EmbodiedBrain perception tasks
    "box_iou": "perception",
    "detection_reward": "perception",
    "counting_reward": "perception",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f"groundrl.rewards.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'groundrl.rewards' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
