"""The Argos agentic verifier.

Per sample the response is parsed once (:class:`ParsedResponse`: final answer, 2-D
points, frame-level and segment-level mentions, reasoning text); each registered
:class:`Tool` declares whether it applies (and why) from that parse and the sample's
fields, and its cost. The applicable tools run once per batch on the samples they apply
to — so judge calls are batched across samples — and the parts are aggregated by a
:class:`~groundrl.rubric.Rubric` with the Argos gate (:func:`groundrl.rubric.gated_mean`)
[Argos §3.1, Eq. 9]: ``R = R_acc if R_acc < τ else (w_A R_acc + w_G G + w_R
R_reasoning) / (w_A + w_G + w_R)`` with a fixed denominator (a sample that calls for
grounding keeps w_G and an answer citing no evidence scores G = 0, see
:meth:`AgenticVerifier.calls_for_grounding`), where ``G`` is the one
grounding term, the mean of the within-category means of the grounding tools that
scored (``spatial``, ``frame_grounding``, ``segment_grounding``) [Argos App. D]; a tool
that fails on a sample is left out, with its reason. Weights are given per term
(``outcome``, ``grounding``, ``reasoning``; default 1 each [ours: the paper states none]).

Default tools: ``outcome`` (exact / MCQ / numeric 5%, and the semantic judge for
free-form answers when a judge is given), ``spatial`` (points in masks from a
:mod:`mask provider <groundrl.verify.masks>`), and with a judge ``frame_grounding``,
``segment_grounding`` and ``reasoning`` (:class:`groundrl.judges.papers.ArgosTeachers`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from groundrl.judges import prompts
from groundrl.parse.answers import drop_tag_blocks, extract_answer
from groundrl.parse.grounding import Point, extract_points, extract_temporal_mentions
from groundrl.rewards.grounding import GROUNDING_CATEGORIES, grounding_term, spatial, spatial_video
from groundrl.rewards.outcome import answer_type, outcome
from groundrl.rubric import Part, Rubric
from groundrl.types import Score
from groundrl.verify.masks import BoxMaskProvider, SampleMaskProvider


@dataclass
class ParsedResponse:
    answer: str | None
    points: list[Point]
    frames: list[Any]
    segments: list[Any]
    reasoning: str

    @classmethod
    def of(cls, text: Any) -> ParsedResponse:
        t = text if isinstance(text, str) else ""
        ans = extract_answer(t)
        frames, segments = extract_temporal_mentions(t)
        reasoning = drop_tag_blocks(t, "answer")  # linear (issue 26)
        return cls(ans.value if ans.ok else None, extract_points(t), frames, segments, reasoning)


TERMS = ("outcome", "grounding", "reasoning")  # the weighted terms of Argos Eq. 9

# a tool reads the samples (recipe-dependent fields), never changes them
Applies = Callable[[ParsedResponse, Mapping[str, Any]], "tuple[bool, str]"]
Run = Callable[[list[str], list[Mapping[str, Any]], list[ParsedResponse]], list[Score]]


@dataclass
class Tool:
    name: str
    applies: Applies
    run: Run
    cost: float = 1.0
    weight: float = 1.0


class VerifierReport(TypedDict):
    """:meth:`VerifierResult.to_dict`: the gated score, each part's value, the reasons
    given, and each tool with why it was chosen or skipped."""

    score: float
    parts: dict[str, float | None]
    reasons: dict[str, str]
    tools: dict[str, str]
    skipped: dict[str, str]


@dataclass
class VerifierResult:
    total: float
    parts: dict[str, Score]
    chosen: dict[str, str]  # tool → why it applied
    skipped: dict[str, str] = field(default_factory=dict)  # tool → why not

    def to_dict(self) -> VerifierReport:
        return {
            "score": self.total,
            "parts": {k: s.value for k, s in self.parts.items()},
            "reasons": {k: s.reason for k, s in self.parts.items() if s.reason},
            "tools": self.chosen,
            "skipped": self.skipped,
        }


def _outcome_tool(judge: Any) -> Tool:
    def applies(p: ParsedResponse, s: Mapping[str, Any]) -> tuple[bool, str]:
        if s.get("answer") is None:
            return False, "no gold answer"
        return True, f"answer type {answer_type(s['answer'])}"

    def run(texts: list[str], samples: list[Mapping[str, Any]], parsed: list[ParsedResponse]) -> list[Score]:
        first = [outcome(t, s["answer"]) for t, s in zip(texts, samples, strict=True)]
        if judge is None:
            return first
        # free-form misses go to the semantic judge in one batch (outcome's value is
        # never None; None would count as a miss)
        todo = {
            i: answer
            for i, (sc, s) in enumerate(zip(first, samples, strict=True))
            if (sc.value or 0.0) < 1.0 and answer_type(s["answer"]) == "free" and (answer := parsed[i].answer)
        }
        if todo:
            gens = judge._generate(
                [
                    prompts.semantic_request(samples[i].get("question"), answer, str(samples[i]["answer"]))
                    for i, answer in todo.items()
                ]
            )
            # lazy: the papers' judges bring orjson; only a judge-backed check needs them
            from groundrl.judges.papers import parse_yes_no

            for i, g in zip(todo, gens, strict=True):
                v = parse_yes_no(g.text) if g.ok else None
                if v is not None:
                    first[i] = Score("outcome", float(v), "free: semantic judge")
                else:
                    first[i] = Score("outcome", first[i].value, first[i].reason + "; semantic judge failed")
        return first

    return Tool("outcome", applies, run, cost=0.0 if judge is None else 1.0)


def _spatial_tool(provider: SampleMaskProvider) -> Tool:
    def applies(p: ParsedResponse, s: Mapping[str, Any]) -> tuple[bool, str]:
        if not p.points:
            return False, "no points cited"
        return True, f"{len(p.points)} point(s) cited"

    def one(t: str, s: Mapping[str, Any]) -> Score:
        video = _video_masks(provider, s)
        if video is not None:  # each point on its own frame [Argos §3.1 "Temporal rewards"]
            frames = s.get("frames")
            n = len(frames) if isinstance(frames, (list, tuple)) and frames else None
            return spatial_video(t, video, n, s.get("fps"), s.get("timestamps"))
        return spatial(t, lambda label: provider(label, s))

    def run(texts: list[str], samples: list[Mapping[str, Any]], parsed: list[ParsedResponse]) -> list[Score]:
        return [one(t, s) for t, s in zip(texts, samples, strict=True)]

    return Tool("spatial", applies, run, cost=0.1)


def _video_masks(provider: SampleMaskProvider, s: Mapping[str, Any]) -> Any:
    """Per-frame masks of a video sample: its ``frame_masks`` (ground truth per frame), or
    — with a model provider (detector + segmenter) and ``frames`` — the provider run on the
    cited frame; ``None`` for an image sample."""
    if s.get("frame_masks") is not None:
        return s["frame_masks"]
    frames = s.get("frames")
    if isinstance(provider, BoxMaskProvider) or not isinstance(frames, (list, tuple)) or not frames:
        return None
    return lambda label, k: provider(label, {**s, "image": frames[k]})


def _teacher_tool(name: str, teachers: Any) -> Tool:
    def applies(p: ParsedResponse, s: Mapping[str, Any]) -> tuple[bool, str]:
        if name == "reasoning":
            return (
                bool(p.reasoning and p.answer),
                "reasoning and an answer" if p.reasoning and p.answer else "no reasoning text",
            )
        mentions = [m for m in (p.frames if name == "frame_grounding" else p.segments) if m.unit == "frame"]
        if not mentions:
            return False, f"no {name.split('_')[0]}-level mentions"
        if not s.get("frames"):
            return False, "no frames in the sample"
        return True, f"{len(mentions)} {name.split('_')[0]}-level mention(s)"

    fn = getattr(teachers, name)

    def run(texts: list[str], samples: list[Mapping[str, Any]], parsed: list[ParsedResponse]) -> list[Score]:
        return fn(texts, samples)

    return Tool(name, applies, run, cost=2.0)


def _emitted_by_tools(completion: Any) -> None:
    """The aggregator's parts are scored by the verifier's tools, never called [ours]."""
    return None


class AgenticVerifier:
    def __init__(
        self,
        judge_backend: Any = None,
        mask_provider: SampleMaskProvider | None = None,
        weights: dict[str, float] | None = None,
        tau: float = 0.5,
        tools: Sequence[str] | None = None,
    ) -> None:
        teachers = None
        if judge_backend is not None:
            # lazy: the papers' judges bring orjson; only a judge-backed check needs them
            from groundrl.judges.papers import ArgosTeachers

            teachers = ArgosTeachers(judge_backend)
        self.teachers = teachers
        self.mask_provider = mask_provider or BoxMaskProvider()
        registry = [_outcome_tool(teachers), _spatial_tool(self.mask_provider)]
        if teachers is not None:
            registry += [
                _teacher_tool(n, teachers) for n in ("frame_grounding", "segment_grounding", "reasoning")
            ]
        names = [t.name for t in registry]
        if tools is not None:
            unknown = set(tools) - set(names)
            if unknown:
                raise ValueError(
                    f"unknown tool(s) {sorted(unknown)}; available: {names} (judge tools need a judge backend)"
                )
            if "outcome" not in tools:
                raise ValueError("the outcome tool is the gate and cannot be left out")
            registry = [t for t in registry if t.name in tools]
        unknown = set(weights or {}) - set(TERMS)
        if unknown:
            raise ValueError(
                f"verifier weights: unknown term(s) {sorted(unknown)}; Argos weighs {', '.join(TERMS)} "
                "(the grounding tools are averaged into one `grounding` term, Argos Eq. 9 / App. D)"
            )
        self.weights = {k: 1.0 for k in TERMS} | {k: float(v) for k, v in (weights or {}).items()}
        negative = {k: v for k, v in self.weights.items() if not v >= 0}
        if negative:
            raise ValueError(
                f"verifier weights must be numbers ≥ 0, got {negative} (Argos Eq. 9 averages the terms)"
            )
        for t in registry:
            t.weight = self.weights.get(t.name, self.weights["grounding"])
        self.tools = registry
        self.tau = tau
        # the verifier emits the terms' scores; this rubric aggregates them [Argos Eq. 9]
        self.aggregator = Rubric(
            [Part(k, _emitted_by_tools, weight=self.weights[k]) for k in TERMS],
            aggregate="gated_mean",
            gate="outcome",
            tau=tau,
            name="argos_verifier",
        )

    def verify(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, Any]]
    ) -> list[VerifierResult]:
        texts = [c if isinstance(c, str) else "" for c in completions]
        parsed = [ParsedResponse.of(t) for t in texts]
        chosen: list[dict[str, str]] = [{} for _ in texts]
        skipped: list[dict[str, str]] = [{} for _ in texts]
        parts: list[dict[str, Score]] = [{} for _ in texts]
        for tool in sorted(self.tools, key=lambda t: t.cost):
            idx = []
            for i, (p, s) in enumerate(zip(parsed, samples, strict=True)):
                ok, why = tool.applies(p, s)
                (chosen if ok else skipped)[i][tool.name] = why
                if ok:
                    idx.append(i)
            if not idx:
                continue
            try:
                scores = tool.run(
                    [texts[i] for i in idx], [samples[i] for i in idx], [parsed[i] for i in idx]
                )
            except Exception as e:  # a tool failure leaves its part out, never the sample
                scores = [Score(tool.name, None, f"tool failed: {type(e).__name__}: {e}") for _ in idx]
            for i, sc in zip(idx, scores, strict=True):
                parts[i][tool.name] = Score(tool.name, sc.value, sc.reason)
        out = []
        for i in range(len(texts)):
            ground = [k for k in GROUNDING_CATEGORIES if k in parts[i]]
            if ground:
                parts[i]["grounding"] = grounding_term({k: parts[i][k] for k in ground})
            self._forfeit_grounding(parts[i], samples[i])
            out.append(VerifierResult(self._gate(parts[i]), parts[i], chosen[i], skipped[i]))
        return out

    def calls_for_grounding(self, sample: Mapping[str, Any]) -> str | None:
        """Why the sample selects a grounding tool, from the sample alone [Argos §3.1:
        tools are chosen "depending on the training sample"]: ground-truth masks or
        boxes, an image or frames a model mask provider can ground, or frames for the
        temporal teachers. ``None`` when it selects none (then w_G leaves Eq. 9) [ours]."""
        names = {t.name for t in self.tools}
        if "spatial" in names:
            if any(sample.get(k) is not None for k in ("points_masks", "frame_masks", "masks", "boxes")):
                return "the sample has masks"
            if not isinstance(self.mask_provider, BoxMaskProvider) and (
                sample.get("image") is not None or sample.get("frames")
            ):
                return "the mask provider can ground the sample's images"
        if names & {"frame_grounding", "segment_grounding"} and sample.get("frames"):
            return "the sample has frames for the temporal teachers"
        return None

    def _forfeit_grounding(self, parts: dict[str, Score], sample: Mapping[str, Any]) -> None:
        """Eq. 9's denominator is fixed: a sample that calls for grounding keeps w_G, and
        a response with no scorable evidence scores the term 0 (it forfeits the share)."""
        g = parts.get("grounding")
        if g is not None and g.value is not None:
            return
        why = self.calls_for_grounding(sample)
        if why is not None:
            cause = g.reason if g is not None else "no grounding cited"
            parts["grounding"] = Score("grounding", 0.0, f"{why}; {cause}: forfeits w_G [Argos Eq. 9]")

    def _gate(self, parts: dict[str, Score]) -> float:
        """Eq. 9 over the outcome, grounding and reasoning terms that scored; 0.0 when
        there is no outcome score to gate on (no gold answer, or the tool failed) [ours]."""
        acc = parts.get("outcome")
        if acc is None or acc.value is None:
            return 0.0
        return self.aggregator.total(parts)

    def as_part(self, name: str = "verifier", weight: float = 1.0) -> Part:
        """The verifier's gated score as one batched rubric part (for RL rewards)."""

        def run(completions: list[Any], samples: Sequence[Mapping[str, Any]]) -> list[Score]:
            return [
                Score(name, r.total, ", ".join(f"{k}={v.value}" for k, v in r.parts.items()))
                for r in self.verify(completions, samples)
            ]

        return Part(name, run, weight=weight, batched=True, value_range=(0.0, 1.0))
