"""EQA-RM: a generative reward model's ``<critique>…</critique><score>s</score>`` output
scored against the gold score ``gt_score``.

``total = accuracy + format`` with ``accuracy = max(0, 1 − (|s − s*|/10)²)`` and
``format ∈ {0, 1}`` (:mod:`groundrl.rewards.critique_score`). The contrastive boosts of
C-GRPO are batch-level and added by the training recipe, not here.
"""

from __future__ import annotations

from groundrl.examples import bundled
from groundrl.recipes.base import Recipe
from groundrl.rewards.critique_score import eqa_accuracy, eqa_format
from groundrl.rubric import Part, Rubric


def build() -> Rubric:
    parts = [
        Part("accuracy", eqa_accuracy, value_range=(0.0, 1.0)),
        Part("format", eqa_format, value_range=(0.0, 1.0)),
    ]
    return Rubric(parts, name="eqa_rm")


RECIPE = Recipe(
    name="eqa_rm",
    paper="EQA-RM",
    summary="critique + 0-10 score: accuracy max(0, 1-(|s-s*|/10)^2) + format",
    build=build,
    required=("gt_score",),
    label_field="gt_score",
    examples=bundled("eqa_rm"),
    gold_example="eq-exact",
    probe_exempt={
        "overflow_length": "no length term in the reward [EQA-RM §3.2]; C-GRPO's max_completion_length bounds critiques",
        "repeat_tags": "the first <score> is read; a repeated block scores the same, never higher",
    },
)
