"""EmbodiedBrain's two-stage rejection sampling as dropping steps (``groundrl curate
reject-pass-rate`` then ``reject-label``).

Stage 1 — difficulty: a prompt's K sampled answers give its pass rate
``r = n_pass / K``; the prompt is kept only when ``min_rate < r < max_rate`` (defaults 0
and 1, both exclusive: a prompt no sample solves is *too hard*, one every sample solves
*too easy*). A sample passes when its ``passes`` entry is truthy (precomputed), else when
the answer matches the gold (``gold`` or ``answer`` field) under the judge (normalised
exact match by default; see :func:`groundrl.curate.consensus.exact_judge`).

Stage 2 — label check: a stronger model's answer (``strong_answer`` in the record, or
asked from a judge model) is compared with the gold; when it contradicts the gold the
sample is dropped as a suspected label error (``label_contradicted``). A sample whose
strong answer is missing is kept with the reason ``no_strong_answer`` (our choice: no
evidence against the label).

Both write every record annotated with ``kept`` and ``reason`` (so a run resumes), and
:func:`kept_records` extracts the kept ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groundrl.curate.consensus import exact_judge

Judge = Callable[[Any, Any], bool]


def _gold(record: dict[str, Any]) -> Any:
    return record.get("gold", record.get("answer"))


def _rate_bound(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise ValueError(f"{name} must be a pass rate in [0, 1], got {v!r}")
    return float(v)


def pass_rate_filter(
    record: dict[str, Any], min_rate: float = 0.0, max_rate: float = 1.0, judge: Judge = exact_judge
) -> dict[str, Any]:
    """Stage 1 for one record ``{id, answers: [K], gold | answer, passes?: [K]}`` → the
    record plus ``n_samples``, ``n_pass``, ``pass_rate``, ``kept`` and ``reason``
    (``kept`` | ``too_hard`` | ``too_easy`` | ``no_samples``).

    >>> r = pass_rate_filter({"id": 1, "gold": "B", "answers": ["B", "A", "B", "C"]})
    >>> r["pass_rate"], r["kept"], r["reason"]
    (0.5, True, 'kept')
    >>> pass_rate_filter({"id": 2, "gold": "B", "answers": ["B", "B"]})["reason"]
    'too_easy'
    """
    lo, hi = _rate_bound("min_rate", min_rate), _rate_bound("max_rate", max_rate)
    if lo >= hi:
        raise ValueError(f"min_rate must be < max_rate, got {lo} and {hi}")
    passes = record.get("passes")
    if isinstance(passes, (list, tuple)):
        flags = [bool(p) for p in passes]
    else:
        answers = record.get("answers") or record.get("samples") or []
        if not isinstance(answers, (list, tuple)):
            answers = [answers]
        gold = _gold(record)
        flags = [bool(judge(a, gold)) for a in answers]
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
    elif rate >= hi:
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
    record: dict[str, Any],
    strong_answer: Callable[[dict[str, Any]], Any] | None = None,
    judge: Judge = exact_judge,
) -> dict[str, Any]:
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
    ok = bool(judge(strong, _gold(record)))
    return {**record, "strong_answer": strong, "kept": ok, "reason": "kept" if ok else "label_contradicted"}


def kept_records(annotated: Path, dest: Path) -> int:
    """Write the ``kept`` records of an annotated file (without the annotation fields and
    the error records) to ``dest``; returns how many."""
    n = 0
    drop = {"kept", "reason", "line"}
    with dest.open("w", encoding="utf-8") as f:
        for line in annotated.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("kept") is True and "error" not in rec:
                f.write(
                    json.dumps({k: v for k, v in rec.items() if k not in drop}, ensure_ascii=False) + "\n"
                )
                n += 1
    return n
