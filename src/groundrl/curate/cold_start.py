"""Proxy-GRM cold-start data: a teacher's distilled critiques split into Correct and Hard.

Proxy-GRM distils a strong teacher's ``<rubric>…</rubric><eval>…</eval><answer>1|2</answer>``
critique for every preference pair, keeps the pairs where the teacher picks the
preferred response ("Correct", ~25k of 60k) and sends the rest ("Hard", including the
teacher's misses) to RL [Proxy-GRM §3.3 Stage 1, App. B.2-B.3]. The Correct pairs are
shared out as in Table 5: 10k for the policy's cold-start SFT (Proxy-GRM-SFT), 5k for
Proxy-SFT, 10k for Proxy-RL — shares 0.4 / 0.2 / 0.4 of the Correct set.

:func:`split_record` does this for one record ``{id, query, response_1, response_2,
preferred, image?, teacher_output | teacher_outputs}``:

* ``status: correct`` — the first teacher output that is well formed (Proxy-GRM's format
  reward is 1, Eq. 6) and picks the preferred response (accuracy +1, Eq. 5) becomes
  ``target``; ``split`` is ``cold_start``, ``proxy_sft`` or ``proxy_rl``, drawn from a
  hash of the id and the seed so reruns agree. A right verdict in a malformed output
  does not count [ours: the SFT stage teaches the format, so it must only see it whole].
* ``status: hard`` — no output qualifies; ``why`` says what the best one got wrong.

Every record carries ``prompt``: the policy GRM's instruction and the pair as one text
(:func:`policy_prompt`), the same for the cold-start SFT and the RL stage.
:func:`sft_record` turns a ``cold_start`` record into ``{id, prompt, target, images?}``,
which a plain ``kind: sft`` stage trains on; :func:`rl_record` turns a ``hard`` record
into a ``proxy_grpo`` data row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Required, TypedDict

from groundrl.judges.prompts import PROXY_POLICY_SYSTEM, proxy_policy_request
from groundrl.parse.scores import parse_preferred
from groundrl.rewards.preference import proxy_accuracy, proxy_format

PAIR_FIELDS = ("query", "response_1", "response_2")
# Table 5 [Proxy-GRM App. B.3]: of the Correct samples, 10k Proxy-GRM-SFT, 5k Proxy-SFT, 10k Proxy-RL
TABLE5_SHARES = {"cold_start": 0.4, "proxy_sft": 0.2, "proxy_rl": 0.4}


def check_shares(shares: Mapping[str, float]) -> dict[str, float]:
    """Validated shares of the Correct set (names from :data:`TABLE5_SHARES`, summing to 1)."""
    unknown = set(shares) - set(TABLE5_SHARES)
    if unknown:
        raise ValueError(f"shares: unknown split(s) {sorted(unknown)}; allowed: {', '.join(TABLE5_SHARES)}")
    vals = {k: float(shares.get(k, 0.0)) for k in TABLE5_SHARES}
    if any(v < 0 for v in vals.values()) or abs(sum(vals.values()) - 1.0) > 1e-6:
        raise ValueError(f"shares must be ≥ 0 and sum to 1, got {vals}")
    return vals


def policy_prompt(query: str, response_1: str, response_2: str) -> str:
    """The policy GRM's request (:func:`groundrl.judges.prompts.proxy_policy_request`) as
    one prompt text: its instruction, then the question and both responses."""
    content = proxy_policy_request(query, response_1, response_2)[-1]["content"]
    last = content[-1] if isinstance(content, list) else None
    user = last["text"] if last is not None and last["type"] == "text" else str(content)
    return f"{PROXY_POLICY_SYSTEM}\n\n{user}"


class SplitRecord(TypedDict, total=False):
    """:func:`split_record`'s row: the pair and its ``prompt`` (absent when the pair is
    not there), ``status`` (``correct`` / ``hard`` / ``missing_fields``), and ``split``
    and ``target`` for a correct record or ``why`` for the others."""

    id: Required[object]
    query: str
    response_1: str
    response_2: str
    preferred: int
    prompt: str
    image: object
    status: str
    why: str
    split: str
    target: str


class SFTRow(TypedDict):
    """:func:`sft_record`: a row of a ``kind: sft`` stage."""

    id: object
    prompt: str
    target: str
    images: NotRequired[list[object]]


def _split_of(rec_id: Any, seed: int, shares: Mapping[str, float]) -> str:
    digest = hashlib.sha256(f"{seed}:{rec_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    acc = 0.0
    for name, share in shares.items():
        acc += share
        if u < acc:
            return name
    return next(k for k, v in reversed(list(shares.items())) if v > 0)


def split_record(
    rec: Mapping[str, Any], seed: int = 0, shares: Mapping[str, float] = TABLE5_SHARES
) -> SplitRecord:
    """One preference record with teacher outputs → a ``correct`` or ``hard`` record (see
    the module doc); ``missing_fields`` when the pair or the teacher output is absent.

    >>> r = {"id": "a", "query": "q", "response_1": "x", "response_2": "y", "preferred": 2,
    ...      "teacher_outputs": ["<rubric>r</rubric><eval>e</eval><answer>1</answer>",
    ...                          "<rubric>r</rubric><eval>e</eval><answer>2</answer>"]}
    >>> out = split_record(r)
    >>> out["status"], out["target"][-18:]
    ('correct', '<answer>2</answer>')
    """
    if not all(isinstance(rec.get(f), str) for f in PAIR_FIELDS):
        return {
            "id": rec.get("id"),
            "status": "missing_fields",
            "why": f"needs text {', '.join(PAIR_FIELDS)}",
        }
    pref = parse_preferred(rec.get("preferred"))
    if not pref.ok:
        return {"id": rec.get("id"), "status": "missing_fields", "why": pref.error}
    outs = rec.get("teacher_outputs", rec.get("teacher_output"))
    outs = [outs] if isinstance(outs, str) else list(outs or [])
    base: SplitRecord = {
        "id": rec.get("id"),
        "query": rec["query"],
        "response_1": rec["response_1"],
        "response_2": rec["response_2"],
        "preferred": pref.value,
        "prompt": policy_prompt(rec["query"], rec["response_1"], rec["response_2"]),
    }
    if rec.get("image") is not None:
        base["image"] = rec["image"]
    if not outs:
        return {**base, "status": "missing_fields", "why": "no teacher_output(s)"}
    why = ""
    for text in outs:
        fmt, acc = proxy_format(text), proxy_accuracy(text, pref.value)
        if fmt.value == 1.0 and acc.value == 1.0:
            split = _split_of(rec.get("id"), seed, check_shares(shares))
            return {**base, "status": "correct", "split": split, "target": text}
        why = why or (acc.reason if acc.value != 1.0 else f"right verdict, bad format: {fmt.reason}")
    return {**base, "status": "hard", "why": why}


def sft_record(rec: Mapping[str, Any]) -> SFTRow:
    """A ``correct`` record → ``{id, prompt, target, images?}`` for a ``kind: sft`` stage."""
    out: SFTRow = {"id": rec.get("id"), "prompt": rec["prompt"], "target": rec["target"]}
    if rec.get("image") is not None:
        out["images"] = [rec["image"]]
    return out


def rl_record(rec: Mapping[str, Any]) -> dict[str, object]:
    """A ``hard`` record → a ``proxy_grpo`` data row (prompt, pair, preferred, and with an
    image both ``image`` for the proxy and ``images`` for the policy)."""
    keys = ("id", "prompt", *PAIR_FIELDS, "preferred", "image")
    out = {k: rec[k] for k in keys if rec.get(k) is not None}
    if rec.get("image") is not None:
        out["images"] = [rec["image"]]
    return out


def teacher_outputs(backend: Any, records: Sequence[Mapping[str, Any]], params: Any) -> list[list[str]]:
    """The teacher's critiques of each record's pair through the policy GRM prompt (a
    failed call raises, so the curate run records an error and retries it)."""
    reqs = [
        proxy_policy_request(r["query"], r["response_1"], r["response_2"], r.get("image")) for r in records
    ]
    gens = backend.generate(reqs, params)
    for g in gens:
        if not g.ok:
            raise RuntimeError(f"teacher call failed: {g.error}")
    return [list(g.texts) for g in gens]
