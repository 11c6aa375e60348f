"""EmbodiedBrain's two-stage rejection sampling as dropping steps (``groundrl curate
reject-pass-rate`` then ``reject-label``) [EmbodiedBrain §4.1.1].

Stage 1 — coarse filter: the baseline model's K sampled answers to a prompt are judged
against the gold; the prompt is dropped only when *every* answer is wrong (``too_hard``:
an ill-posed or broken sample) — the paper keeps the rest, all-correct prompts included.
So by default a prompt is kept when its pass rate ``r = n_pass / K`` is above
``min_rate`` = 0; ``max_rate`` (none by default) optionally drops prompts with
``r ≥ max_rate`` as ``too_easy`` [ours: an extra knob, off by default]. A sample passes
when its ``passes`` entry is truthy (precomputed), else when the judge accepts the answer:
normalised exact match by default (:func:`groundrl.curate.consensus.exact_judge`), or —
as in the paper, which has a stronger LLM judge the answers — :func:`semantic_judge` on
a judge backend (an exact match is accepted without a call).

Stage 2 — label check: an expert model's answer (``strong_answer`` in the record, or
asked from a judge model) is compared with the gold; a significant discrepancy drops the
sample as a suspected label error (``label_contradicted``). The comparison is the same
judge: exact match by default, the LLM's semantic consistency check with a judge backend
(the paper compares meaning, not strings). A sample whose strong answer is missing is
kept with the reason ``no_strong_answer`` (our choice: no evidence against the label).

Both write every record annotated with ``kept`` and ``reason`` (so a run resumes), and
:func:`kept_records` extracts the kept ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from groundrl.curate.consensus import exact_judge
from groundrl.curate.pipelines import write_selected
from groundrl.judges.base import SamplingParams
from groundrl.judges.prompts import consistency_request

Judge = Callable[[Any, Any], bool]


def _gold(record: Mapping[str, object]) -> object:
    return record.get("gold", record.get("answer"))


def _rate_bound(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise ValueError(f"{name} must be a pass rate in [0, 1], got {v!r}")
    return float(v)


def pass_rate_filter(
    record: Mapping[str, object],
    min_rate: float = 0.0,
    max_rate: float | None = None,
    judge: Judge = exact_judge,
) -> dict[str, object]:
    """Stage 1 for one record ``{id, answers: [K], gold | answer, passes?: [K]}`` → the
    record plus ``n_samples``, ``n_pass``, ``pass_rate``, ``kept`` and ``reason``
    (``kept`` | ``too_hard`` | ``too_easy`` | ``no_samples``). By default only an
    all-wrong prompt is dropped [EmbodiedBrain §4.1.1].

    >>> r = pass_rate_filter({"id": 1, "gold": "B", "answers": ["B", "A", "B", "C"]})
    >>> r["pass_rate"], r["kept"], r["reason"]
    (0.5, True, 'kept')
    >>> pass_rate_filter({"id": 2, "gold": "B", "answers": ["B", "B"]})["reason"]
    'kept'
    >>> pass_rate_filter({"id": 3, "gold": "B", "answers": ["A", "C"]})["reason"]
    'too_hard'
    """
    lo = _rate_bound("min_rate", min_rate)
    hi = None if max_rate is None else _rate_bound("max_rate", max_rate)
    if hi is not None and lo >= hi:
        raise ValueError(f"min_rate must be < max_rate, got {lo} and {hi}")
    passes = record.get("passes")
    if isinstance(passes, (list, tuple)):
        flags = [bool(p) for p in passes]
    else:
        answers = record.get("answers") or record.get("samples") or []
        if not isinstance(answers, (list, tuple)):
            answers = [answers]
        gold = _gold(record)
        flags = [_ask(judge, a, gold, record) for a in answers]
    if not flags:
        return {
            **record,
            "n_samples": 0,
            "n_pass": 0,
            "pass_rate": None,
            "kept": False,
            "reason": "no_samples",
        }
    n_pass = sum(flags)
    rate = n_pass / len(flags)
    if rate <= lo:
        reason = "too_hard"
    elif hi is not None and rate >= hi:
        reason = "too_easy"
    else:
        reason = "kept"
    return {
        **record,
        "n_samples": len(flags),
        "n_pass": n_pass,
        "pass_rate": rate,
        "kept": reason == "kept",
        "reason": reason,
    }


def label_check(
    record: Mapping[str, object],
    strong_answer: Callable[[Mapping[str, object]], object] | None = None,
    judge: Judge = exact_judge,
) -> dict[str, object]:
    """Stage 2 for one record ``{id, gold | answer, strong_answer? , question?}`` → the
    record plus ``strong_answer``, ``kept`` and ``reason`` (``kept`` |
    ``label_contradicted`` | ``no_strong_answer``). ``strong_answer(record)`` asks a
    stronger model when the record carries none.

    >>> label_check({"id": 1, "gold": "two", "strong_answer": "three"})["reason"]
    'label_contradicted'
    """
    strong = record.get("strong_answer")
    if strong is None and strong_answer is not None:
        strong = strong_answer(record)
    if strong is None:
        return {**record, "kept": True, "reason": "no_strong_answer"}
    ok = _ask(judge, strong, _gold(record), record)
    return {**record, "strong_answer": strong, "kept": ok, "reason": "kept" if ok else "label_contradicted"}


def semantic_judge(backend: Any, params: Any = None) -> Judge:
    """A :data:`Judge` asking an LLM whether an answer agrees with the gold, with the
    record's question, in EmbodiedBrain's consistency-checker form [EmbodiedBrain §9.2.1:
    Question, Answer A, Answer B → ``{"consistent": bool, "reason": …}``]
    (:func:`groundrl.judges.prompts.consistency_request`); an exact match is accepted
    without a call. A failed or unreadable call raises, so the curate run records an
    error and retries the record instead of judging it wrong."""
    sampling = params or SamplingParams(temperature=0.0, max_tokens=128)  # [ours] room for the reason

    def judge(answer: Any, gold: Any, question: Any = None) -> bool:
        if exact_judge(answer, gold):
            return True
        g = backend.generate([consistency_request(question, str(answer), str(gold))], sampling)[0]
        if not g.ok:
            raise RuntimeError(f"judge call failed: {g.error}")
        v = parse_consistent(g.text)
        if v is None:
            raise RuntimeError(f'judge gave no {{"consistent": true|false}} JSON: {str(g.text)[:80]!r}')
        return v

    judge.takes_question = True  # type: ignore[attr-defined]
    return judge


_CONSISTENT_RE = re.compile(r'"consistent"\s*+:\s*+(true|false)\b', re.IGNORECASE)


def parse_consistent(text: Any) -> bool | None:
    """The ``consistent`` verdict of a §9.2.1 JSON answer (fenced or not); ``None`` when
    there is none. Linear.

    >>> parse_consistent('```json\\n{"consistent": false, "reason": "left vs right"}\\n```')
    False
    >>> parse_consistent("yes") is None
    True
    """
    m = _CONSISTENT_RE.search(text) if isinstance(text, str) else None
    return None if m is None else m.group(1).lower() == "true"


def _question(record: Mapping[str, object]) -> object:
    return record.get("question", record.get("prompt"))


def _ask(judge: Judge, answer: Any, gold: Any, record: Mapping[str, object]) -> bool:
    """Call ``judge``, with the record's question when it takes one (§9.2.1)."""
    if getattr(judge, "takes_question", False):
        return bool(judge(answer, gold, question=_question(record)))  # type: ignore[call-arg]
    return bool(judge(answer, gold))


def kept_records(annotated: Path, dest: Path) -> int:
    """Write the ``kept`` records of an annotated file (without the annotation fields and
    the error records) to ``dest``; returns how many."""
    drop = {"kept", "reason", "line"}
    return write_selected(
        annotated,
        dest,
        lambda rec: rec.get("kept") is True,
        lambda rec: {k: v for k, v in rec.items() if k not in drop},
    )
