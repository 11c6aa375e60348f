"""Prompt templates of the papers' judges, written in our own words from the papers'
descriptions (none of the papers' appendix prompts is copied) but carrying their criteria,
weights, score bands and rules; each system prompt's docstring names the paper figure or
appendix it follows and what differs. Each builder returns an OpenAI-style request (a
message list); images are content parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundrl.judges.base import ImagePart, Message, Request

EQA_RM_SYSTEM = (
    "You grade an embodied question-answering agent. You get the frames it saw while moving through a "
    "scene, the question, the agent's reasoning trace and its final answer. Weigh two things.\n"
    "(A) The answer, 60% of the grade: does it make sense as a reply to this question given what the frames "
    "show; can what it claims (objects, actions, states) be seen in or fairly inferred from the frames; is it "
    "as specific as the visible evidence allows, neither vaguer than the frames warrant nor more detailed "
    "than they support?\n"
    "(B) The reasoning trace, 40% of the grade: is it logical and free of contradictions and large gaps; do "
    "its references to what was seen (an early view, an object in a close-up) match the frames; does the "
    "final answer actually follow from the trace?\n"
    "Write your analysis of both parts inside <critique>...</critique>, then one integer from 1 to 10 inside "
    "<score>...</score> that combines them with those weights. Use the whole scale: keep 1 and 10 for "
    "responses that truly deserve them rather than reaching for the ends by habit."
)
"""EQA-RM's evaluator [EQA-RM App. D, "Rejective Finetuning Dataset Generation Prompt
Guideline"]: the same two weighted criteria (answer plausibility + visual grounding +
specificity 60%, reasoning-trace quality incl. trace-answer consistency 40%), the 1-10
weighted score in ``<score>``, the critique in ``<critique>`` and the instruction against
habitual extreme scores, in our words. Differs: the paper's role/context headings and
output skeleton are not reproduced."""

EQA_RM_REFERENCE_SYSTEM = (
    "You grade an embodied question-answering agent against a known correct answer. You get the frames it "
    "saw, the question, the reference answer, the agent's reasoning trace and its final answer. Weigh two "
    "things.\n"
    "(A) Agreement with the reference, 60% of the grade: how close is the meaning of the agent's answer to "
    "the reference answer? Count synonyms, paraphrases and equivalent concepts as agreement; small grammar "
    "differences matter little.\n"
    "(B) The reasoning trace, 40% of the grade: is it logical and free of contradictions and large gaps; do "
    "its references to what was seen match the frames; does the final answer follow from the trace?\n"
    "Write your analysis inside <critique>...</critique>, then one integer from 1 to 10 inside "
    "<score>...</score> that combines the two with those weights. Use the whole scale: keep 1 and 10 for "
    "responses that truly deserve them.\n"
    "Important: (1) the critique must never mention the reference answer, not even in other words; use it "
    "for the score only. (2) The agent saw the whole video while you see only some keyframes, so the trace "
    "may name things you cannot see; do not count those against it, but judge strictly every part of the "
    "trace that concerns the frames you do see."
)
"""EQA-RM's ground-truth score labeller [EQA-RM App. D, "Ground Truth Score Generation
Prompt Guideline"]: semantic similarity to the reference 60%, reasoning-trace quality 40%,
1-10 weighted score, and the prompt's two "Important" rules (no mention of the ground
truth in the critique; keyframes only, strict on what is visible); in our words. Differs:
the no-extreme-scores line is carried over from the RFT prompt (the paper's labelling
prompt states the format only)."""

PROXY_POLICY_SYSTEM = (
    "You compare two responses to the same visual question. First write a rubric: the concrete, checkable "
    "criteria a good answer to this question must meet, each with a weight, specific to this question and "
    "image and without repeating a criterion, inside <rubric>...</rubric>. Then evaluate both responses "
    "criterion by criterion against your rubric inside <eval>...</eval>. Finally give the better response's "
    "number, 1 or 2, inside <answer>...</answer>."
)
"""Proxy-GRM's policy GRM [Proxy-GRM §3.1, Fig. 2-3]: rubric → evaluation → verdict in
``<rubric>``/``<eval>``/``<answer>`` (the format Eq. 6 checks). Weighted, specific,
non-redundant criteria follow the paper's description of good rubrics (Fig. 3); the paper
prints no prompt, so the wording is ours."""

PROXY_AGENT_SYSTEM = (
    "You are given a visual question, two responses and a rubric written by someone else. Do not write a "
    "rubric of your own: apply the given rubric's criteria one by one to both responses and let only them "
    "decide which response is better. Think inside <think>...</think>, then write 1 or 2 inside "
    "<answer>...</answer>."
)
"""Proxy-GRM's proxy agent [Proxy-GRM §3.2]: consumes an external rubric, evaluates
criterion by criterion and answers in ``<think>``/``<answer>``, never generating a rubric.
The paper prints no prompt; the wording is ours."""

PLANNING_GRM_SYSTEM = (
    "You review a household robot's reply to a task: a short reply to the user in <response>, a numbered "
    "plan in <plans> and an action list in <actions>. Compare it with the reference answer and judge it "
    "strictly and fairly on four things. Reply: does it acknowledge the request politely, capture what the "
    "user wants, and stay short and natural? Plan: are all needed steps there, in a sensible order (move to a "
    "place before handling things there), each about something the scene shows, tagged only [Navigate] or "
    "[Manipulate], with no pointless or repeated steps? Actions: is every verb from the given atomic action "
    "set, does each action carry its objects and places, and do the actions match the plan steps one to one, "
    "in the same order and with the same names? Format: exactly <response>...</response><plans>...</plans>"
    "<actions>...</actions>, every tag closed, nothing missing or extra.\n"
    "Any of these forces a low grade: a verb outside the atomic action set; an object or place that the "
    "reference answer does not contain; a missing essential step (such as never picking the item up or never "
    "handing it over); a badly wrong order (such as putting something down before picking it up); broken "
    "format (missing tags, malformed lists).\n"
    "Grade bands: 1.00 practically the same as the reference with natural wording and sound logic; 0.90-0.99 "
    "same meaning, small wording differences, no logic errors; 0.75-0.89 sound structure with small gaps or "
    "extras, still executable; 0.50-0.74 some logic or format problems, partly executable; 0.25-0.49 clear "
    "mistakes such as wrong order or missing actions; 0.00-0.24 severe failures such as illegal actions, "
    "objects that do not exist, or collapsed format.\n"
    "Keep the reasoning very short, inside <think>...</think>, then give the grade between 0.00 and 1.00 with "
    "exactly two decimals inside <score>...</score>, for example <think>order slip</think><score>0.62</score>."
)
"""EmbodiedBrain's planning GRM [EmbodiedBrain §9.2.4]: the four dimensions (response,
plans, actions, format), the five critical-error rules, the six score bands, the
[Navigate]/[Manipulate] tag rule and the two-decimal score in ``<score>`` after a terse
``<think>``, in our words. Differs: none in content; the paper's "based on, but not
limited to" wording and its example layout are not reproduced."""

ARGOS_FRAME_SYSTEM = (
    "You check one sentence from a video description against a single frame. Judge only what this frame "
    "shows: treat any time or frame number in the sentence as neutral and do not assume anything outside the "
    "frame. Check the objects, their attributes and their spatial relations; when the sentence relates two "
    "things (for example, a cup beside the sink), both must be visible and the relation must be plausible. "
    "When the evidence is unclear, be conservative. Score 1.0 when every key claim is clearly supported with "
    "no contradiction, 0.0 when a claim is contradicted or refers to something not visible. Reply with JSON "
    'only: {"score": 1.0} or {"score": 0.0}.'
)
"""Argos' frame-level teacher [Argos App. D, Fig. 11]: visible content only, timing
treated as neutral, both entities of a relation visible, conservative when unclear, a
0.0/1.0 score as JSON; in our words. Differs: none in content."""

ARGOS_SEGMENT_SYSTEM = (
    "You check a described action against an ordered, evenly spaced sequence of frames that are meant to "
    "cover it. Use only these frames. Check that the objects involved appear, that the action visibly "
    "happens, that the frames progress plausibly through it (set-up, interaction, result, with visible state "
    "changes), and that it takes place within the claimed start-to-end span: a drift of a frame or so is "
    "fine, a clear mismatch is not. Any frame that clearly contradicts the description counts against it. "
    "Score 1.0 when the action is clearly visible and unfolds as described with its start and end aligned "
    "within a small tolerance, 0.0 when it does not happen, key objects are missing or the description "
    'clearly mismatches. Reply with JSON only: {"score": 1.0} or {"score": 0.0}.'
)
"""Argos' segment-level teacher [Argos App. D, Fig. 12]: visual evidence, temporal
progression, temporal extent within a small tolerance, contradiction by any frame,
single-sequence scope, a 0.0/1.0 score as JSON; in our words. Differs: none in content."""

YES_NO_SUFFIX = " Answer with yes or no only."


def _images(images: Sequence[Any] | Any | None) -> list[ImagePart]:
    if images is None:
        return []
    if not isinstance(images, (list, tuple)):
        images = [images]
    return [{"type": "image", "image": im} for im in images]


def _user(parts: list[ImagePart], text: str) -> Message:
    return {"role": "user", "content": [*parts, {"type": "text", "text": text}]}


def eqa_rm_request(
    question: str, reasoning: str, answer: str, frames: Any = None, reference: str | None = None
) -> Request:
    """EQA-RM evaluator; with ``reference`` the ground-truth variant used to label data."""
    text = f"Question: {question}\n\nAgent reasoning:\n{reasoning}\n\nAgent answer: {answer}"
    system = EQA_RM_SYSTEM
    if reference is not None:
        text += f"\n\nReference answer: {reference}"
        system = EQA_RM_REFERENCE_SYSTEM
    return [{"role": "system", "content": system}, _user(_images(frames), text)]


def proxy_policy_request(query: str, response_1: str, response_2: str, image: Any = None) -> Request:
    text = f"Question: {query}\n\n[Response 1]\n{response_1}\n\n[Response 2]\n{response_2}"
    return [{"role": "system", "content": PROXY_POLICY_SYSTEM}, _user(_images(image), text)]


def proxy_agent_request(
    query: str, response_1: str, response_2: str, rubric: str, image: Any = None
) -> Request:
    """The proxy sees query, image, both responses (in that order) and the external rubric only."""
    text = (
        f"Question: {query}\n\n[Response 1]\n{response_1}\n\n[Response 2]\n{response_2}\n\n[Rubric]\n{rubric}"
    )
    return [{"role": "system", "content": PROXY_AGENT_SYSTEM}, _user(_images(image), text)]


def planning_grm_request(
    question: str, reference: str, atomic_actions: Sequence[str], completion: str, images: Any = None
) -> Request:
    text = (
        f"Task: {question}\n\nReference plan:\n{reference}\n\nAtomic actions: {', '.join(sorted(atomic_actions))}"
        f"\n\nPlan to grade:\n{completion}"
    )
    return [{"role": "system", "content": PLANNING_GRM_SYSTEM}, _user(_images(images), text)]


CONSISTENCY_SYSTEM = (
    "You check whether two answers to the same question agree. You get the question and two answers, "
    "Answer A and Answer B. Decide whether they mean the same thing or at least do not conflict "
    "(consistent), or whether they contradict each other or differ in meaning (inconsistent). Reply with "
    'one JSON object and nothing else: {"consistent": true or false, "reason": "<one short sentence>"}.'
)
"""EmbodiedBrain's rejection-sampling consistency checker [EmbodiedBrain §9.2.1]: question
plus Answer A / Answer B, strict JSON ``{"consistent": bool, "reason": str}``; in our words."""


def consistency_request(question: str | None, answer_a: str, answer_b: str) -> Request:
    """[EmbodiedBrain §9.2.1] the question and both answers; the judge answers JSON."""
    q = question if isinstance(question, str) and question.strip() else "(not given)"
    text = f"Question: {q}\nAnswer A: {answer_a}\nAnswer B: {answer_b}"
    return [{"role": "system", "content": CONSISTENCY_SYSTEM}, _user([], text)]


def semantic_request(question: str | None, prediction: str, reference: str) -> Request:
    q = f"Question: {question}\n" if question else ""
    text = (
        f"{q}Reference answer: {reference}\nPredicted answer: {prediction}\nDo the two answers mean the same thing?"
        + YES_NO_SUFFIX
    )
    return [_user([], text)]


def frame_request(description: str, frame: Any) -> Request:
    """Argos' frame-level check (:data:`ARGOS_FRAME_SYSTEM`)."""
    return [
        {"role": "system", "content": ARGOS_FRAME_SYSTEM},
        _user(_images(frame), f'Sentence: "{description}"'),
    ]


def segment_request(description: str, frames: Sequence[Any]) -> Request:
    """Argos' segment-level check over the cited span's frames, in order (:data:`ARGOS_SEGMENT_SYSTEM`)."""
    frames = list(frames)
    text = f'Frames F1..F{len(frames)} above, in order. Description: "{description}"'
    return [{"role": "system", "content": ARGOS_SEGMENT_SYSTEM}, _user(_images(frames), text)]


def reasoning_request(question: str, reasoning: str, image: Any = None) -> Request:
    """Context for Argos' reasoning quality: P(answer | question, reasoning, image)."""
    return [
        _user(_images(image), f"Question: {question}\n\nReasoning:\n{reasoning}\n\nTherefore the answer is:")
    ]
