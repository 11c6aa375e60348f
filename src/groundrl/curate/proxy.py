"""Proxy-GRM proxy-agent data: proxy records from GRM outputs, and teacher distillation.

* :func:`proxy_record` — a policy GRM's output on a pair (``query``, ``response_1``,
  ``response_2``, ``preferred``, ``image``?, and ``output``: its
  ``<rubric>…</rubric><eval>…</eval><answer>…</answer>`` text, or ``rubric``) → a proxy
  record with ``rubric`` = the first ``<rubric>…</rubric>`` block and nothing else
  (:func:`groundrl.rewards.preference.rubric_text`, what the proxy is shown in policy
  training [Proxy-GRM §3.3, Eq. 7]). The proxy sees the rubric, never a preamble, the
  evaluation or the verdict: an output without a closed rubric block is dropped
  (``status: no_rubric``).
* :func:`distill_record` — a proxy record with a teacher's outputs (``teacher_output``
  or ``teacher_outputs``: texts of a strong model answering the proxy prompt) → the first
  output whose format is valid (``<think>…</think>`` then ``<answer>…</answer>``) and
  whose verdict is the preferred response, as ``target`` (``status: kept``); else
  ``bad_format`` / ``wrong_verdict``.

Every record is written with a ``status``; training (``proxy_sft`` / ``proxy_rl`` stages)
reads only ``status: kept`` (or records without a status).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, Required, TypedDict

from groundrl.judges.base import Request
from groundrl.judges.prompts import proxy_agent_request
from groundrl.parse.scores import parse_pairwise_verdict, parse_preferred
from groundrl.parse.tags import tags_in_order
from groundrl.rewards.preference import rubric_text

PAIR_FIELDS = ("query", "response_1", "response_2")


class ProxyPair(TypedDict):
    """The pair a proxy record is made of."""

    id: object
    query: str
    response_1: str
    response_2: str
    preferred: int  # 1 or 2
    image: NotRequired[object]


class ProxyRecord(TypedDict, total=False):
    """:func:`proxy_record` / :func:`distill_record`'s row: the pair (absent with
    ``status: missing_fields``), the ``rubric``, the teacher's ``target`` when kept."""

    id: Required[object]
    query: str
    response_1: str
    response_2: str
    preferred: int
    image: object
    rubric: str
    target: str
    status: str


def _pair(rec: Mapping[str, Any]) -> ProxyPair | None:
    if not all(isinstance(rec.get(f), str) for f in PAIR_FIELDS):
        return None
    pref = parse_preferred(rec.get("preferred")).value
    if pref not in (1, 2):
        return None
    out: ProxyPair = {
        "id": rec.get("id"),
        "query": rec["query"],
        "response_1": rec["response_1"],
        "response_2": rec["response_2"],
        "preferred": pref,
    }
    if rec.get("image") is not None:
        out["image"] = rec["image"]
    return out


def proxy_record(rec: Mapping[str, Any]) -> ProxyRecord:
    """GRM output → proxy record (see the module doc).

    >>> proxy_record({"id": "a", "query": "q", "response_1": "x", "response_2": "y", "preferred": 2,
    ...               "output": "<rubric>count</rubric><eval>2 is right</eval><answer>2</answer>"})["rubric"]
    '<rubric>count</rubric>'
    >>> proxy_record({"id": "b", "query": "q", "response_1": "x", "response_2": "y", "preferred": 2,
    ...               "output": "2 wins. <rubric>count</rubric><eval>e</eval><answer>2</answer>"})["rubric"]
    '<rubric>count</rubric>'
    """
    pair = _pair(rec)
    if pair is None:
        return {"id": rec.get("id"), "status": "missing_fields"}
    text = rec.get("rubric") if isinstance(rec.get("rubric"), str) else rec.get("output")
    rubric = rubric_text(text)
    if not rubric:
        return {**pair, "status": "no_rubric"}
    return {**pair, "rubric": rubric, "status": "kept"}


def proxy_format_ok(text: Any) -> bool:
    """``<think>…</think>`` followed by ``<answer>…</answer>`` (the proxy agent's format)."""
    return isinstance(text, str) and tags_in_order(text, ["think", "answer"])


def distill_record(rec: Mapping[str, Any]) -> ProxyRecord:
    """Proxy record + teacher outputs → the first right, well-formed output as ``target``.

    >>> r = {"id": "a", "query": "q", "response_1": "x", "response_2": "y", "preferred": 1, "rubric": "r",
    ...      "teacher_outputs": ["<answer>1</answer>", "<think>t</think><answer>2</answer>",
    ...                          "<think>t</think><answer>1</answer>"]}
    >>> distill_record(r)["target"], distill_record(r)["status"]
    ('<think>t</think><answer>1</answer>', 'kept')
    """
    pair = _pair(rec)
    if pair is None or not isinstance(rec.get("rubric"), str):
        return {"id": rec.get("id"), "status": "missing_fields"}
    outs = rec.get("teacher_outputs")
    if outs is None:
        outs = [rec.get("teacher_output")]
    if isinstance(outs, str):
        outs = [outs]
    base: ProxyRecord = {**pair, "rubric": rec["rubric"]}
    formatted = [t for t in outs if proxy_format_ok(t)]
    if not formatted:
        return {**base, "status": "bad_format"}
    for t in formatted:
        if parse_pairwise_verdict(t).value == pair["preferred"]:
            return {**base, "target": t, "status": "kept"}
    return {**base, "status": "wrong_verdict"}


def proxy_request(rec: Mapping[str, Any]) -> Request:
    """The proxy agent's request for a proxy record (the inference prompt)."""
    for f in (*PAIR_FIELDS, "rubric"):
        if not isinstance(rec.get(f), str):
            raise ValueError(f"a proxy record needs text `{f}`")
    return proxy_agent_request(
        rec["query"], rec["response_1"], rec["response_2"], rec["rubric"], rec.get("image")
    )
