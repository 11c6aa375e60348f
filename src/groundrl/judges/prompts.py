"""Prompt templates of the papers' judges, written in our own words from the papers'
descriptions (none of the papers' appendix prompts is copied). Each builder returns an
OpenAI-style request (a message list); images are content parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundrl.judges.base import Request

EQA_RM_SYSTEM = (
    "You are a reward model for embodied question answering. You see frames an agent observed while "
    "exploring a scene, the question it was asked, its reasoning and its final answer. Judge whether the "
    "reasoning is grounded in the frames (objects, positions and events it cites really appear, in that "
    "order) and whether the answer is correct and follows from it. Write your critique inside "
    "<critique>...</critique>, then a single integer score from 1 (wrong, ungrounded) to 10 (correct, "
    "fully grounded) inside <score>...</score>."
)

PROXY_POLICY_SYSTEM = (
    "You compare two responses to the same visual question. First write a rubric: the concrete, checkable "
    "criteria a good answer to this question must meet, inside <rubric>...</rubric>. Then evaluate both "
    "responses against your rubric inside <eval>...</eval>. Finally give the better response's number, 1 or "
    "2, inside <answer>...</answer>."
)

PROXY_AGENT_SYSTEM = (
    "You are given a visual question, two responses and a rubric written by someone else. Use only the "
    "rubric's criteria to decide which response is better. Think inside <think>...</think>, then write 1 "
    "or 2 inside <answer>...</answer>."
)

PLANNING_GRM_SYSTEM = (
    "You grade a household robot's plan. You are given the task, a reference plan, the set of atomic "
    "actions the robot can execute, and the plan to grade (<response>, <plans>, <actions>). Judge whether "
    "the plan would accomplish the task with valid atomic actions in a sensible order, comparing with the "
    "reference where useful. Think inside <think>...</think>, then give a score between 0.00 and 1.00 "
    "inside <score>...</score>."
)

YES_NO_SUFFIX = " Answer with yes or no only."


def _images(images: Sequence[Any] | Any | None) -> list[dict[str, Any]]:
    if images is None:
        return []
    if not isinstance(images, (list, tuple)):
        images = [images]
    return [{"type": "image", "image": im} for im in images]


def _user(parts: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return {"role": "user", "content": [*parts, {"type": "text", "text": text}]}


def eqa_rm_request(
    question: str, reasoning: str, answer: str, frames: Any = None, reference: str | None = None
) -> Request:
    """EQA-RM evaluator; with ``reference`` the ground-truth variant used to label data."""
    text = f"Question: {question}\n\nAgent reasoning:\n{reasoning}\n\nAgent answer: {answer}"
    if reference is not None:
        text += f"\n\nReference answer: {reference}"
    return [{"role": "system", "content": EQA_RM_SYSTEM}, _user(_images(frames), text)]


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


def semantic_request(question: str | None, prediction: str, reference: str) -> Request:
    q = f"Question: {question}\n" if question else ""
    text = (
        f"{q}Reference answer: {reference}\nPredicted answer: {prediction}\nDo the two answers mean the same thing?"
        + YES_NO_SUFFIX
    )
    return [_user([], text)]


def frame_request(description: str, frame: Any) -> Request:
    return [
        _user(
            _images(frame),
            f'Does this frame show what the sentence describes?\nSentence: "{description}"' + YES_NO_SUFFIX,
        )
    ]


def segment_request(description: str, frames: Sequence[Any]) -> Request:
    text = (
        f'These frames are consecutive, in order. Do they show the event described?\nEvent: "{description}"'
        + YES_NO_SUFFIX
    )
    return [_user(_images(list(frames)), text)]


def reasoning_request(question: str, reasoning: str, image: Any = None) -> Request:
    """Context for Argos' reasoning quality: P(answer | question, reasoning, image)."""
    return [
        _user(_images(image), f"Question: {question}\n\nReasoning:\n{reasoning}\n\nTherefore the answer is:")
    ]
