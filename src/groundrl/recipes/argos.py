"""Argos: outcome accuracy gating grounded parts.

Parts: ``outcome`` (exact / MCQ / numeric 5% / semantic hook) and ``spatial`` (points
inside the caller's masks; not applicable without points). Aggregation is the Argos gate
``R = R_acc if R_acc < τ else Σ w_k R_k / Σ w_k`` over the applicable parts, with
``R_acc`` = outcome. Defaults (the paper gives no numbers we could verify): all weights
1 and ``τ = 0.5``; with a binary outcome any τ in (0, 1] behaves the same.
Judge-backed parts (``semantic``, ``frame_grounding``, ``segment_grounding``,
``reasoning``) join when a judge is configured.
"""

from __future__ import annotations

from typing import Any

from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option
from groundrl.rewards.grounding import spatial
from groundrl.rewards.outcome import outcome
from groundrl.rubric import Part, Rubric


def _judge(backend: Any, sampling: Any) -> Any:
    from groundrl.judges.papers import ArgosTeachers

    return ArgosTeachers(backend, sampling)


def build(
    tau: float = 0.5, weights: dict[str, float] | None = None, judge: Any = None, verifier: Any = None
) -> Rubric:
    if verifier is not None:
        # the agentic verifier picks the tools per sample and applies the gate itself
        return Rubric([verifier.as_part("verifier")], name="argos")
    if weights is not None and (
        not isinstance(weights, dict)
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in weights.values())
    ):
        raise ValueError(
            f'weights must be a mapping {{part: number}}, e.g. {{"spatial": 0.5}}; got {weights!r}'
        )
    w = {"outcome": 1.0, "spatial": 1.0, **(weights or {})}
    semantic = getattr(judge, "semantic", None) if judge is not None else None

    def outcome_part(completion, answer):
        return outcome(completion, answer, semantic=semantic)

    def spatial_part(completion, points_masks=None):
        return spatial(completion, points_masks)

    parts = [
        Part("outcome", outcome_part, weight=w["outcome"], value_range=(0.0, 1.0)),
        Part("spatial", spatial_part, weight=w["spatial"], fallback=None, value_range=(0.0, 1.0)),
    ]
    if judge is not None and hasattr(judge, "argos_parts"):
        parts.extend(judge.argos_parts(w))
    return Rubric(parts, aggregate="gated_mean", gate="outcome", tau=tau, name="argos")


RECIPE = Recipe(
    name="argos",
    paper="Argos",
    summary="gated: outcome < tau ? outcome : weighted mean of outcome, spatial (and judge parts)",
    build=build,
    required=("answer",),
    optional=("points_masks",),
    label_field="answer",
    options=(
        Option("tau", "float", 0.5, "accuracy gate: below it the total is the outcome alone"),
        Option("weights", "json", None, 'part weights, e.g. {"outcome": 1, "spatial": 1}'),
        Option(
            "judge",
            "judge",
            None,
            "teacher judges: adds semantic answer matching and parts frame_grounding, "
            "segment_grounding, reasoning",
        ),
        Option("verifier", "object", None, "an AgenticVerifier used as the one part (Python only)"),
    ),
    judge_factory=_judge,
    judge_parts=("frame_grounding", "segment_grounding", "reasoning"),
)
