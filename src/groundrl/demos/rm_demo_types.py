"""The records of ``groundrl demo rm``: what :mod:`groundrl.demos.rm_demo` builds and
writes (``metrics.json``'s blocks, ``scores.jsonl``'s rows) and
:mod:`groundrl.demos.rm_demo_report` reads. Plain dicts at runtime; these types name
their keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

if TYPE_CHECKING:
    from PIL.Image import Image

    from groundrl.demos.rm_demo_world import Episode

#: An input a grader is evaluated on: the original frames or one C-GRPO perturbation.
Perturbation = Literal["none", "temporal", "spatial"]
#: The graders the demo evaluates (``metrics.json``'s per-grader blocks).
GraderKey = Literal["teacher", "sft", "cgrpo", "cgrpo_mu0"]

#: Per grader: ``n``, ``format_rate``, ``accuracy`` (numbers) and their ``*_ci95``
#: intervals, then ``sensitivity_<kind><subset>`` / ``tracking_<kind>`` with ``_n`` and
#: ``_ci95`` for each perturbation and episode subset (keys built from those names, so a
#: mapping, not a record). A value is a number, an interval ``[lo, hi]`` (``None`` ends
#: for no data) or ``None`` (a mean of nothing).
GraderMetrics = dict[str, float | list[float | None] | None]
#: One logged C-GRPO step: ``step``, ``reward``, ``frac_reward_zero_std`` and TRL's
#: ``cgrpo/…`` and ``rewards/…`` columns (``None`` where TRL logged nothing).
CurvePoint = dict[str, float | None]


class KeptRow(TypedDict):
    """An auxiliary evaluation Eq. 1 kept: the episode, the critique SFT trains on."""

    episode: Episode
    target: str
    mode: Literal["blind", "read"]


class RFTStats(TypedDict):
    """The RFT filter's counts (``metrics.json`` ``rft``)."""

    episodes: int
    sampled: int
    kept: int
    kept_rate: float
    reasons: dict[str, int]  # rejective_filter's reason -> instances
    blind_sampled: int
    blind_kept: int
    blind_share_of_kept: float
    kept_reads_right_answer: int
    kept_reads_wrong_answer: int


class InstanceRow(TypedDict):
    """An episode as the EQA-RM training row every stage uses, or a perturbed copy."""

    id: str
    question: str
    reasoning: str
    answer: str
    gt_score: float
    kind: str  # the question kind (rm_demo_world.QUESTION_KINDS)
    prompt: Sequence[Mapping[str, object]]  # chat messages, passed to the chat template
    images: list[Image]  # the keyframes
    perturbation: Perturbation


class ScoreRow(TypedDict):
    """One episode's parsed scores by one grader (a ``scores.jsonl`` row, less ``grader``)."""

    id: str
    gold: float
    kind: str
    none: NotRequired[float | None]  # the score on each input; None: unparsable
    temporal: NotRequired[float | None]
    spatial: NotRequired[float | None]
    format: NotRequired[bool]  # of the output on the original frames
    text: NotRequired[str]


class PairedDiff(TypedDict):
    """Mean over shared episodes of ``b − a`` with its paired bootstrap interval."""

    mean: float | None
    ci95: list[float | None]
    n: int


class CgrpoLog(TypedDict):
    """What a C-GRPO run reports besides its model."""

    curve: list[CurvePoint]


class RMDemoMetrics(TypedDict):
    """``metrics.json``. The keys after ``sft_final_loss`` are filled in as the run goes."""

    config: dict[str, object]  # dataclasses.asdict(RMDemoConfig): printed, not computed with
    rft: RFTStats
    sft_final_loss: float | None
    teacher: NotRequired[GraderMetrics]
    sft: NotRequired[GraderMetrics]
    cgrpo: NotRequired[GraderMetrics]
    cgrpo_mu0: NotRequired[GraderMetrics]
    cgrpo_minus_sft: NotRequired[dict[str, PairedDiff]]  # accuracy, <kind>[_right], tracking_<kind>
    cgrpo_minus_mu0: NotRequired[dict[str, PairedDiff]]
    cgrpo_curve: NotRequired[list[CurvePoint]]
    cgrpo_mu0_curve: NotRequired[list[CurvePoint]]
    examples: NotRequired[dict[GraderKey, list[str | None]]]
    seconds: NotRequired[dict[str, float]]
    wall_seconds: NotRequired[float]
