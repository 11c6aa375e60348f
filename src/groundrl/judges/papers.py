"""The papers' judges: prompt + backend call + parser + score mapping, each usable as a
batched rubric part. A failed or unparseable call never raises: the part gets its
stated fallback with a reason, and ``failures`` counts it."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from groundrl.judges import prompts
from groundrl.judges.base import (
    Generation,
    JudgeBackend,
    LogProbResult,
    Request,
    SamplingParams,
)
from groundrl.parse.answers import drop_tag_blocks, extract_answer
from groundrl.parse.grounding import (
    FrameMention,
    SegmentMention,
    extract_temporal_mentions,
    frame_index,
    segment_indices,
)
from groundrl.parse.scores import (
    parse_pairwise_verdict,
    parse_preferred,
    parse_score,
    parse_unit_score,
    unit_score_reason,
)
from groundrl.rewards.planning import DEFAULT_ATOMIC_ACTIONS
from groundrl.rewards.preference import NO_RUBRIC_PROXY, rubric_text
from groundrl.rubric import Part
from groundrl.types import Score

_YES_RE = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)

log = logging.getLogger("groundrl.judges")


def parse_yes_no(text: str | None) -> bool | None:
    """``True``/``False`` for an answer starting with yes/no (after a ``<think>`` block
    if any), else ``None``."""
    if not isinstance(text, str):
        return None
    t = drop_tag_blocks(text, "think")  # linear; the regex it replaces was quadratic
    m = _YES_RE.match(t)
    return None if m is None else m.group(1).lower() == "yes"


# whitespace possessive: '"', ':' and the digits cannot start with it, and \s*"?\s* tried every
# split of a whitespace run ('score:' + spaces was quadratic, issue 41)
_SCORE_KEY_RE = re.compile(r'\bscore"?\s*+[:=]\s*+"?\s*+([01](?:\.\d+)?|\.\d+)\b', re.IGNORECASE)
_BARE_NUMBER_RE = re.compile(r"^\W*([01](?:\.\d+)?)\W*$")


def parse_binary_score(text: str | None) -> float | None:
    """An Argos teacher's 0/1 grounding score [Argos Eq. 4, App. D Fig. 11-12]: the
    ``"score"`` of a JSON reply (``{"score": 1.0}``, also ``Score: 1``), a bare number, or a reply starting
    with yes/no (older prompts); ``None`` when none is there. A value in between is
    rounded to 0 or 1 at 0.5 (Eq. 4 is binary).

    >>> [parse_binary_score(t) for t in ('{"score": 1.0}', "0.0", "Score: 1", "no", "<think>x</think> Yes", "maybe")]
    [1.0, 0.0, 1.0, 0.0, 1.0, None]
    """
    if not isinstance(text, str):
        return None
    t = drop_tag_blocks(text, "think")
    m = _SCORE_KEY_RE.search(t) or _BARE_NUMBER_RE.match(t)
    if m is not None:
        v = float(m.group(1))
        return 1.0 if v >= 0.5 else 0.0
    yn = parse_yes_no(t)
    return None if yn is None else float(yn)


class PaperJudge:
    """Shared plumbing: a backend, sampling parameters and a failure counter."""

    def __init__(self, backend: JudgeBackend, params: SamplingParams | None = None) -> None:
        self.backend = backend
        self.params = params or SamplingParams(temperature=0.0, max_tokens=512)
        self.failures = 0
        self.calls = 0

    def _generate(
        self, requests: Sequence[Request], params: SamplingParams | None = None
    ) -> list[Generation]:
        if not requests:
            return []
        self.calls += len(requests)
        try:
            gens = self.backend.generate(list(requests), params or self.params)
        except Exception as e:  # a backend bug must not crash a training step
            log.exception("judge backend %s raised", type(self.backend).__name__)
            gens = [Generation(error=f"{type(e).__name__}: {e}") for _ in requests]
        failed = sum(1 for g in gens if not g.ok)
        if failed:
            log.warning("%s: %d of %d judge calls failed", type(self).__name__, failed, len(gens))
        self.failures += failed
        return gens


# ---------------------------------------------------------------------------
# EQA-RM evaluator
# ---------------------------------------------------------------------------


class EQARMEvaluator(PaperJudge):
    """Frames + question + reasoning + answer → ``<critique>…</critique><score>1-10</score>``.
    With ``reference`` in an item, the ground-truth-score variant (for labelling data)."""

    @staticmethod
    def _requests(items: Sequence[Mapping[str, Any]]) -> list[Request]:
        return [
            prompts.eqa_rm_request(
                str(it.get("question", "")),
                str(it.get("reasoning", "")),
                str(it.get("answer", "")),
                it.get("frames"),
                it.get("reference"),
            )
            for it in items
        ]

    def raw(
        self, items: Sequence[Mapping[str, Any]], params: SamplingParams | None = None
    ) -> list[Generation]:
        """The judge's outputs, one :class:`Generation` (``n`` samples) per item."""
        return self._generate(self._requests(items), params)

    def evaluate(
        self, items: Sequence[Mapping[str, Any]], params: SamplingParams | None = None
    ) -> list[list[float | None]]:
        """Scores of each item's samples (``None`` for an unparseable sample; an empty
        list when the call failed)."""
        return [[parse_score(t, 0, 10).value for t in g.texts] for g in self.raw(items, params)]


# ---------------------------------------------------------------------------
# Proxy-GRM: policy and proxy agent
# ---------------------------------------------------------------------------

PAIR_FIELDS = ("query", "response_1", "response_2")

# A proxy refusal the request caused (the rubric is the policy's part of it).
_POLICY_HTTP = re.compile(r"HTTP (?:400|413|422)\b")
# A rubric that names the verdict: the proxy would read it instead of judging [ours].
_VERDICT_IN_RUBRIC = re.compile(
    r"<answer>"
    r"|\b(?:response|answer|output|candidate)\s*+#?\s*+[12]\s++(?:is|was)\s++(?:the\s++)?"
    r"(?:better|preferred|superior|winner|correct|best)\b"
    r"|\b(?:prefer|choose|select|pick)(?:s|red|ed)?\s++(?:response|answer|output)\s*+#?\s*+[12]\b"
    r"|\b(?:better|preferred|winning)\s++(?:response|answer|output)\s++(?:is\s++)?#?\s*+[12]\b"
    r"|\b(?:answer|verdict|winner)\s*+[:=]\s*+#?\s*+[12]\b",
    re.IGNORECASE,
)


def verdict_in_rubric(rubric: str) -> str | None:
    """The text by which a rubric states its verdict, or ``None``. Linear (no nested
    quantifiers; possessive whitespace).

    >>> verdict_in_rubric("<rubric>1. counts chairs. Response 1 is better.</rubric>")
    'Response 1 is better'
    >>> verdict_in_rubric("<rubric>1. counts chairs (weight 0.5)</rubric>") is None
    True
    """
    m = _VERDICT_IN_RUBRIC.search(rubric) if isinstance(rubric, str) else None
    return None if m is None else m.group(0)


def policy_caused(why: str) -> bool:
    """Whether a failed proxy call was the policy's doing (see the module docstring)."""
    return not why.startswith("proxy call failed") or _POLICY_HTTP.search(why) is not None


class ProxyAgent(PaperJudge):
    """Given query, image, both responses and an external rubric only, answers
    ``<think>…</think><answer>1|2</answer>``.

    Proxy reward [Proxy-GRM §3.3, Eq. 7]: +1 if it picks the preferred response, −1
    otherwise — also when the policy caused the missing verdict: an answer naming
    neither/both, a request the proxy refuses (:func:`policy_caused`), no
    ``<rubric>…</rubric>`` block, or a rubric that states the verdict
    (:func:`verdict_in_rubric`; never sent). A call the infrastructure failed (after the
    backend's retries) is unscored: ``None``, counted in ``failures`` — never a silent 0."""

    VALUE_RANGE = (-1.0, 1.0)  # the reward's range (Part.value_range)

    def verdicts(
        self, items: Sequence[Mapping[str, object]], rubrics: Sequence[str]
    ) -> list[tuple[int | None, str]]:
        reqs = [
            prompts.proxy_agent_request(
                str(it["query"]), str(it["response_1"]), str(it["response_2"]), rub, it.get("image")
            )
            for it, rub in zip(items, rubrics, strict=True)
        ]
        out: list[tuple[int | None, str]] = []
        for g in self._generate(reqs):
            if not g.ok:
                out.append((None, f"proxy call failed: {g.error}"))
                continue
            v = parse_pairwise_verdict(g.text)
            out.append((v.value, "" if v.ok else f"proxy answer unparseable: {v.error}"))
        return out

    def reward_batch(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, object]]
    ) -> list[Score]:
        scores: list[Score | None] = [None] * len(completions)
        todo = []
        for i, s in enumerate(samples):
            missing = [f for f in PAIR_FIELDS if not isinstance(s.get(f), str)]
            if missing:
                scores[i] = Score(
                    "proxy", None, f"needs fields {', '.join(PAIR_FIELDS)} (missing {missing[0]})"
                )
            else:
                todo.append(i)
        rubrics = {i: rubric_text(completions[i]) for i in todo}
        for i in [i for i in todo if not rubrics[i]]:  # no rubric: no call, Eq. 7's "otherwise"
            scores[i] = Score("proxy", NO_RUBRIC_PROXY, "no <rubric>…</rubric> block for the proxy to follow")
        for i in [i for i in todo if rubrics[i]]:  # the verdict in the rubric: no call, −1 [ours]
            if said := verdict_in_rubric(rubrics[i]):
                scores[i] = Score("proxy", NO_RUBRIC_PROXY, f"the rubric states the verdict ({said!r})")
        todo = [i for i in todo if rubrics[i] and scores[i] is None]
        results = self.verdicts([samples[i] for i in todo], [rubrics[i] for i in todo])
        for i, (verdict, why) in zip(todo, results, strict=True):
            if verdict is None:  # the policy's doing: Eq. 7's −1; the server's: unscored
                scores[i] = Score("proxy", NO_RUBRIC_PROXY if policy_caused(why) else None, why)
                continue
            pref = parse_preferred(samples[i].get("preferred")).value
            if pref not in (1, 2):
                scores[i] = Score("proxy", None, "preferred must be 1 or 2")
            else:
                scores[i] = Score("proxy", 1.0 if verdict == pref else -1.0, f"proxy picked {verdict}")
        return scores  # type: ignore[return-value]  # every slot is filled above

    def as_part(self, name: str = "proxy", weight: float = 1.0) -> Part:
        return Part(
            name, self.reward_batch, weight=weight, batched=True, fallback=0.0, value_range=self.VALUE_RANGE
        )


class ProxyGRMPolicy(PaperJudge):
    """The policy GRM: rubric → eval → answer for a pair of responses."""

    def judge(self, items: Sequence[Mapping[str, object]]) -> list[Generation]:
        reqs = [
            prompts.proxy_policy_request(
                str(it["query"]), str(it["response_1"]), str(it["response_2"]), it.get("image")
            )
            for it in items
        ]
        return self._generate(reqs)


class ProxyVerified(TypedDict):
    """One item of :func:`proxy_verified`: the policy's output and verdict (``None``
    when unparseable or failed), the proxy's verdict, and whether the two agree."""

    output: str | None
    verdict: int | None
    proxy_verdict: int | None
    agree: bool
    error: str | None


def proxy_verified(
    policy: ProxyGRMPolicy, proxy: ProxyAgent, items: Sequence[Mapping[str, object]]
) -> list[ProxyVerified]:
    """Proxy-verified inference: the policy's verdict is kept; the proxy, given the
    policy's rubric, votes too, and their agreement is reported."""
    gens = policy.judge(items)
    rubrics = [rubric_text(g.text or "") for g in gens]
    proxy_out = proxy.verdicts(items, rubrics)
    out: list[ProxyVerified] = []
    for g, (pv, _) in zip(gens, proxy_out, strict=True):
        v = parse_pairwise_verdict(g.text) if g.ok else None
        verdict = v.value if v is not None else None
        out.append(
            {
                "output": g.text,
                "verdict": verdict,
                "proxy_verdict": pv,
                "agree": verdict is not None and verdict == pv,
                "error": g.error,
            }
        )
    return out


# ---------------------------------------------------------------------------
# EmbodiedBrain planning GRM
# ---------------------------------------------------------------------------


def task_text(sample: Mapping[str, Any]) -> str:
    """The task a judge is told: ``question``, else ``task``, else the text of ``prompt``
    (a string, or the text parts of the chat's user turns, in order). ``""`` if none.

    >>> task_text({"prompt": [{"role": "system", "content": "fmt"},
    ...                       {"role": "user", "content": [{"type": "image"},
    ...                                                     {"type": "text", "text": "Put the apple away"}]}]})
    'Put the apple away'
    """
    for key in ("question", "task"):
        v = sample.get(key)
        if isinstance(v, str) and v.strip():
            return v
    prompt = sample.get("prompt")
    if isinstance(prompt, str):
        return prompt
    if not isinstance(prompt, (list, tuple)):
        return ""
    texts: list[str] = []
    for m in prompt:
        if not isinstance(m, Mapping) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, (list, tuple)):
            texts += [p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
    return "\n".join(texts)


class PlanningGRM(PaperJudge):
    """Task + reference answer + atomic action set + completion →
    ``<think>…</think><score>0.00-1.00</score>``; the first ``<score>`` number clamped to
    [0, 1], 0 when unparseable or when the call fails (the paper's fallback).

    The task is the row's ``question`` or ``task``, else the text of its ``prompt`` (the
    project's ``{prompt, gold}`` rows: a string or the user turns of chat messages), so
    the judge never gets an empty ``Task:``. The paper's GRM is Qwen3-30B-A3B, a text
    model [EmbodiedBrain §4.2, item 4; prompt §9.2.4]: no images are sent unless
    ``send_images=True`` declares a vision judge (a text-only server rejects image parts,
    which would fail every call)."""

    VALUE_RANGE = (0.0, 1.0)  # the reward's range (Part.value_range)
    # semantic equivalence for the task-type router's answer parts (embodied_brain sets
    # ArgosTeachers.semantic here); None: those parts use rules only
    semantic: Callable[[str, str], float | None] | None = None

    def __init__(
        self,
        backend: JudgeBackend,
        params: SamplingParams | None = None,
        atomic_actions: Sequence[str] = tuple(DEFAULT_ATOMIC_ACTIONS),
        send_images: bool = False,
    ) -> None:
        super().__init__(backend, params)
        self.atomic_actions = tuple(atomic_actions)
        self.send_images = bool(send_images)

    def reward_batch(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, object]]
    ) -> list[Score]:
        reqs = [
            prompts.planning_grm_request(
                task_text(s),
                str(s.get("gold", "")),
                self.atomic_actions,
                c if isinstance(c, str) else "",
                s.get("images") if self.send_images else None,
            )
            for c, s in zip(completions, samples, strict=True)
        ]
        out = []
        for g in self._generate(reqs):
            if not g.ok:
                out.append(Score("grm", 0.0, f"judge call failed: {g.error}"))
            else:
                v = parse_unit_score(g.text)
                out.append(Score("grm", v, unit_score_reason(g.text)))  # NaN/inf/range named
        return out

    def as_part(self, name: str = "grm", weight: float = 0.8) -> Part:
        return Part(
            name, self.reward_batch, weight=weight, batched=True, fallback=0.0, value_range=self.VALUE_RANGE
        )


# ---------------------------------------------------------------------------
# Argos teachers
# ---------------------------------------------------------------------------


def _strip_answer(text: str) -> str:
    return drop_tag_blocks(text, "answer")


REASONING_FRAMES = 8  # [ours] frames of a video shown to the reasoning teacher (Eq. 5's v)


def visual_input(sample: Mapping[str, Any], max_frames: int = REASONING_FRAMES) -> Any:
    """Eq. 5's ``v`` [Argos §3.1]: the sample's image, or for a video up to ``max_frames``
    of its ``frames`` spread evenly from the first to the last, in order [ours: the paper
    gives the whole video; a teacher's context bounds the count]; ``None`` without either.

    >>> visual_input({"frames": list(range(20))}, 4)
    [0, 6, 13, 19]
    """
    if sample.get("image") is not None:
        return sample["image"]
    frames = sample.get("frames")
    if not isinstance(frames, (list, tuple)) or not frames:
        return None
    n = len(frames)
    if n <= max_frames:
        return list(frames)
    return [frames[round(k * (n - 1) / (max_frames - 1))] for k in range(max_frames)]


class ArgosTeachers(PaperJudge):
    """Argos' teacher judges: semantic equivalence, frame- and segment-level grounding
    (binary, the judge answers ``{"score": 0.0|1.0}``: :func:`parse_binary_score`), and
    reasoning quality = mean per-token
    probability ``mean_t exp(log p(a_t | question, reasoning, image, a_<t))`` of the
    predicted answer (the normalisation we chose: a length-normalised probability in
    [0, 1], comparable across answer lengths)."""

    # -- semantic equivalence (the outcome part's hook) --------------------------

    def semantic(self, prediction: str, reference: str) -> float | None:
        g = self._generate([prompts.semantic_request(None, prediction, reference)])[0]
        v = parse_yes_no(g.text) if g.ok else None
        return None if v is None else float(v)

    # -- grounding ----------------------------------------------------------------

    def _grounding(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, object]], kind: str
    ) -> list[Score]:
        name = f"{kind}_grounding"
        reqs: list[Request] = []
        owners: list[int | tuple[int, str]] = []  # the sample of each request, or (sample, why not)
        scores: list[Score | None] = [None] * len(completions)
        for i, (c, s) in enumerate(zip(completions, samples, strict=True)):
            frames = s.get("frames")
            found = extract_temporal_mentions(c)
            mentions: list[FrameMention] | list[SegmentMention] = found[0] if kind == "frame" else found[1]
            if not mentions:
                scores[i] = Score(name, None, f"no {kind}-level mentions")
                continue
            if not isinstance(frames, (list, tuple)) or not frames:
                scores[i] = Score(name, None, "no frames in the sample")
                continue
            fps, stamps = s.get("fps"), s.get("timestamps")
            for m in mentions:
                req, why = _mention_request(m, frames, fps, stamps)
                if req is None:
                    owners.append((i, why))
                else:
                    reqs.append(req)
                    owners.append(i)
        gens = iter(self._generate(reqs))
        tally: dict[int, list[float]] = {}
        failed: dict[int, int] = {}
        for o in owners:
            if isinstance(o, tuple):
                tally.setdefault(o[0], []).append(0.0)  # citing a frame that does not exist is wrong
                continue
            g = next(gens)
            v = parse_binary_score(g.text) if g.ok else None
            if v is None:
                failed[o] = failed.get(o, 0) + 1
                continue
            tally.setdefault(o, []).append(float(v))
        for i in range(len(completions)):
            if scores[i] is not None:
                continue
            vals = tally.get(i, [])
            if not vals:
                scores[i] = Score(name, None, f"judge failed on all {failed.get(i, 0)} mentions")
            else:
                why = f"{sum(vals):g}/{len(vals)} mentions confirmed" + (
                    f"; {failed[i]} judge failures" if i in failed else ""
                )
                scores[i] = Score(name, sum(vals) / len(vals), why)
        return scores  # type: ignore[return-value]  # every slot is filled above

    def frame_grounding(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, object]]
    ) -> list[Score]:
        return self._grounding(completions, samples, "frame")

    def segment_grounding(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, object]]
    ) -> list[Score]:
        return self._grounding(completions, samples, "segment")

    # -- reasoning quality -------------------------------------------------------

    def reasoning(self, completions: Sequence[Any], samples: Sequence[Mapping[str, object]]) -> list[Score]:
        scores: list[Score | None] = [None] * len(completions)
        reqs, conts, idx = [], [], []
        for i, (c, s) in enumerate(zip(completions, samples, strict=True)):
            ans = extract_answer(c)
            reasoning = _strip_answer(c) if isinstance(c, str) else ""
            if not ans.ok or not reasoning:
                scores[i] = Score("reasoning", None, "needs reasoning text and a final answer")
                continue
            reqs.append(prompts.reasoning_request(str(s.get("question", "")), reasoning, visual_input(s)))
            conts.append(" " + ans.value)
            idx.append(i)
        if reqs:
            self.calls += len(reqs)
            try:
                res = self.backend.logprob(reqs, conts)
            except Exception as e:
                res = [LogProbResult(None, f"{type(e).__name__}: {e}") for _ in reqs]
            for i, r in zip(idx, res, strict=True):
                p = r.mean_token_prob
                if p is None:
                    self.failures += 1
                    scores[i] = Score("reasoning", None, f"log-prob scoring failed: {r.error}")
                else:
                    scores[i] = Score("reasoning", p, "mean token probability of the answer")
        return scores  # type: ignore[return-value]  # every slot is filled above

    def argos_parts(self, weights: dict[str, float] | None = None) -> list[Part]:
        w = {"frame_grounding": 1.0, "segment_grounding": 1.0, "reasoning": 1.0, **(weights or {})}
        return [
            Part(
                "frame_grounding",
                self.frame_grounding,
                weight=w["frame_grounding"],
                batched=True,
                fallback=None,
                value_range=(0.0, 1.0),
            ),
            Part(
                "segment_grounding",
                self.segment_grounding,
                weight=w["segment_grounding"],
                batched=True,
                fallback=None,
                value_range=(0.0, 1.0),
            ),
            Part(
                "reasoning",
                self.reasoning,
                weight=w["reasoning"],
                batched=True,
                fallback=None,
                value_range=(0.0, 1.0),
            ),
        ]


def _mention_request(
    m: FrameMention | SegmentMention, frames: Sequence[Any], fps: Any, stamps: Any
) -> tuple[Request | None, str]:
    """The judge request that checks one mention against its frames, or ``None`` and why
    the mention cannot be checked (it cites a frame the sample does not have)."""
    # frames 1-based as in Argos' traces; seconds through the sample's fps/timestamps
    if isinstance(m, FrameMention):
        at = frame_index(m, len(frames), fps, stamps)
        return (prompts.frame_request(m.context, frames[at.value]), "") if at.ok else (None, at.error)
    span = segment_indices(m, len(frames), fps, stamps)
    if not span.ok:
        return None, span.error
    a, b = span.value
    return prompts.segment_request(m.context, frames[a : b + 1]), ""
