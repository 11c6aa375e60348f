"""Argos: outcome accuracy gating grounded parts [Argos §3.1, Eq. 9].

Parts: ``outcome`` (exact / MCQ / numeric 5% / semantic hook), ``grounding`` — the one
visual-grounding term: the mean of the within-category means of points in masks
(``spatial``), frame-level and segment-level mentions confirmed by the teacher
(:func:`groundrl.rewards.grounding.grounding_term`, [Argos App. D]); not applicable when
no category applies — and, with a judge, ``reasoning`` (P(answer | q, r, v), Eq. 5).

Aggregation is Eq. 9's gate ``R = R_acc if R_acc < τ else (w_A R_acc + w_G G + w_R
R_reasoning) / (w_A + w_G + w_R)``, ``R_acc`` = outcome, written once in
:func:`groundrl.rubric.gated_mean` (the agentic verifier aggregates through it too). The
denominator is fixed per sample: a sample with masks (or, with teachers, frames) keeps
w_G, and a response that cites no evidence scores grounding 0 — it forfeits the share
rather than dropping it (:func:`calls_for_grounding`). A sample with no grounding
references leaves w_G out [ours: the paper is silent].
Defaults [ours: the paper states no values]: weights 1 and ``τ = 0.5``; with a binary
outcome any τ in (0, 1] behaves the same. Weight keys: ``outcome``, ``grounding``,
``reasoning``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from groundrl.examples import bundled
from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option
from groundrl.rewards.grounding import grounding_term, spatial, spatial_video
from groundrl.rewards.outcome import outcome
from groundrl.rubric import Part, Rubric
from groundrl.types import Score


def _judge(backend: Any, sampling: Any) -> Any:
    # lazy: the papers' judges bring orjson; only a judged rubric needs them
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
    unknown = set(weights or {}) - set(WEIGHT_KEYS)
    if unknown:
        raise ValueError(
            f"weights: unknown part(s) {sorted(unknown)}; Argos weighs {', '.join(WEIGHT_KEYS)} "
            "(points, frame and segment grounding are averaged into `grounding`, Argos Eq. 9 / App. D)"
        )
    w = {k: 1.0 for k in WEIGHT_KEYS} | dict(weights or {})
    semantic = getattr(judge, "semantic", None) if judge is not None else None

    def outcome_part(completion, answer):
        return outcome(completion, answer, semantic=semantic)

    parts = [
        Part("outcome", outcome_part, weight=w["outcome"], value_range=(0.0, 1.0)),
        Part(
            "grounding",
            grounding_batch(judge),
            weight=w["grounding"],
            batched=True,
            fallback=None,
            value_range=(0.0, 1.0),
        ),
    ]
    if judge is not None and hasattr(judge, "argos_parts"):
        parts.extend(p for p in judge.argos_parts(w) if p.name == "reasoning")
    return Rubric(parts, aggregate="gated_mean", gate="outcome", tau=tau, name="argos")


WEIGHT_KEYS = ("outcome", "grounding", "reasoning")


def _spatial(completion: Any, s: Mapping[str, Any]) -> Score:
    """Points in masks: per frame for a video sample with ``frame_masks`` (each point on
    the frame its sentence cites), else on the image's ``points_masks``."""
    if s.get("frame_masks") is not None:
        frames = s.get("frames")
        n = len(frames) if isinstance(frames, (list, tuple)) and frames else None
        return spatial_video(completion, s["frame_masks"], n, s.get("fps"), s.get("timestamps"))
    return spatial(completion, s.get("points_masks"))


def grounding_batch(judge: Any = None) -> Any:
    """``fn(completions, samples)``: per sample the one grounding term of points
    (``points_masks``) and, with teacher judges, frame and segment mentions (batched)."""

    def run(completions: list[Any], samples: Sequence[Mapping[str, Any]]) -> list[Score]:
        cats: list[dict[str, Score | None]] = [
            {"spatial": _spatial(c, s)} for c, s in zip(completions, samples, strict=True)
        ]
        if judge is not None and hasattr(judge, "frame_grounding"):
            for name in ("frame_grounding", "segment_grounding"):
                for cat, sc in zip(cats, getattr(judge, name)(completions, samples), strict=True):
                    cat[name] = sc
        return [
            _forfeit_if_called_for(grounding_term(c), s, judge) for c, s in zip(cats, samples, strict=True)
        ]

    return run


def calls_for_grounding(sample: Mapping[str, object], temporal: bool = False) -> bool:
    """Whether the sample selects a grounding tool [Argos §3.1: tools are chosen
    "depending on the training sample"]: it carries masks (``points_masks``,
    ``frame_masks``, ``masks``, ``boxes``), or — with temporal teachers — video frames.
    Decided from the sample alone, never from the response [ours], so a response cannot
    remove the term by citing nothing."""
    if any(sample.get(k) is not None for k in ("points_masks", "frame_masks", "masks", "boxes")):
        return True
    frames = sample.get("frames")
    return temporal and isinstance(frames, (list, tuple)) and len(frames) > 0


def _forfeit_if_called_for(term: Score, sample: Mapping[str, object], judge: Any) -> Score:
    """An unscorable grounding term on a sample that calls for grounding is 0: Eq. 9's
    fixed denominator keeps w_G, so the ungrounded answer forfeits that share."""
    if term.value is not None or not calls_for_grounding(sample, hasattr(judge, "frame_grounding")):
        return term
    return Score(
        "grounding", 0.0, f"the sample calls for grounding; {term.reason}: forfeits w_G [Argos Eq. 9]"
    )


RECIPE = Recipe(
    name="argos",
    paper="Argos",
    summary="gated: outcome < tau ? outcome : weighted mean of outcome, grounding (and reasoning)",
    build=build,
    required=("answer",),
    optional=("points_masks", "frame_masks"),
    label_field="answer",
    options=(
        Option("tau", "float", 0.5, "accuracy gate: below it the total is the outcome alone"),
        Option("weights", "json", None, 'part weights, e.g. {"outcome": 1, "grounding": 1, "reasoning": 1}'),
        Option(
            "judge",
            "judge",
            None,
            "teacher judges: semantic answer matching, frame/segment mentions in the grounding "
            "term, and the reasoning part",
        ),
        Option("verifier", "object", None, "an AgenticVerifier used as the one part (Python only)"),
    ),
    judge_factory=_judge,
    judge_parts=("grounding", "reasoning"),
    examples=bundled("argos"),
    gold_example="ar-mcq",
    probe_exempt={
        "overflow_length": "Eq. 9 has no length term [Argos §3.1]; the answer is read once",
        "repeat_tags": "the final <answer> is read once; repeating it scores the same, never higher",
    },
)
