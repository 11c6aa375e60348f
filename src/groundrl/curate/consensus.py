"""EmbodiedBrain's two-stage rejection sampling.

Stage 1 (consensus): k baseline answers per sample are judged against the gold label.

* **A** — all k correct (easy): only a seeded fraction ``keep_a`` is kept;
* **B** — some but not all correct: kept;
* **C** — none correct, but a stronger model's answer matches the gold: kept;
* **D** — none correct and the stronger model does not match either (or there is no
  stronger answer): dropped.

Stage 2 (oracle check): when a stronger model's answer is given and contradicts the gold
(the judge says it does not match), the gold label is flagged ``suspect_label: True`` for
review; the flag does not change ``kept``. Without a stronger answer the label is not
flagged.

Our choices where the paper is silent: ``keep_a`` defaults to 0.2; a sample with no
baseline answers has none correct (it is C or D, never A); the default judge is
normalised exact match, which never matches an empty gold.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from groundrl.parse.answers import normalize_answer

Judge = Callable[[Any, Any], bool]


def exact_judge(answer: Any, gold: Any) -> bool:
    """Normalised exact match (lower-case, no punctuation or articles, collapsed
    whitespace, see :func:`groundrl.parse.answers.normalize_answer`); an empty gold
    matches nothing."""
    g = normalize_answer(gold)
    return g != "" and normalize_answer(answer) == g


def _check(keep_a: Any, judge: Any) -> None:
    if isinstance(keep_a, bool) or not isinstance(keep_a, (int, float)) or not 0 <= keep_a <= 1:
        raise ValueError(f"keep_a (the kept fraction of category A) must be in [0, 1], got {keep_a!r}")
    if not callable(judge):
        raise ValueError(f"judge must be a callable judge(answer, gold) -> bool, got {judge!r}")


def _answers(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]  # a single answer given without a list


def categorize(record: Mapping[str, object], judge: Judge = exact_judge) -> dict[str, object]:
    """``{id, gold, answers: [k answers], strong_answer?}`` → the record plus
    ``category`` (A/B/C/D), ``n_correct`` and ``suspect_label``; no keep decision."""
    _check(0.0, judge)
    if not isinstance(record, dict):
        record = {"id": None}
    gold = record.get("gold")
    answers = _answers(record.get("answers"))
    n_ok = sum(1 for a in answers if judge(a, gold))
    strong = record.get("strong_answer")
    strong_ok = strong is not None and bool(judge(strong, gold))
    if answers and n_ok == len(answers):
        cat = "A"
    elif n_ok > 0:
        cat = "B"
    elif strong_ok:
        cat = "C"
    else:
        cat = "D"
    return {
        **record,
        "category": cat,
        "n_correct": n_ok,
        "suspect_label": strong is not None and not strong_ok,
    }


def consensus(
    record: Mapping[str, object], keep_a: float = 0.2, seed: int = 0, judge: Judge = exact_judge
) -> dict[str, object]:
    """One record, streaming: the input record plus ``category``, ``kept``, ``n_correct``
    and ``suspect_label``.

    B and C are kept, D is not; an A record is kept when
    ``random.Random(f"{seed}|{id}").random() < keep_a`` — a draw fixed by the seed and the
    record's id, so the decision does not depend on record order and a resumed run makes
    the same one. About ``keep_a`` of the A records are kept (Bernoulli per record); for
    exactly ``round(keep_a · |A|)`` use :func:`consensus_batch`.
    """
    _check(keep_a, judge)
    out = categorize(record, judge)
    if out["category"] == "A":
        kept = random.Random(f"{seed}|{out.get('id')}").random() < keep_a
    else:
        kept = out["category"] in ("B", "C")
    return {**out, "kept": kept}


def consensus_batch(
    records: Iterable[Mapping[str, object]], keep_a: float = 0.2, seed: int = 0, judge: Judge = exact_judge
) -> list[dict[str, object]]:
    """All records at once, in input order, annotated like :func:`consensus`; of the
    ``n_A`` category-A records exactly ``floor(keep_a · n_A + 0.5)`` are kept, chosen by
    ``random.Random(seed).sample``."""
    _check(keep_a, judge)
    out = [categorize(r, judge) for r in records]
    a_idx = [i for i, r in enumerate(out) if r["category"] == "A"]
    n_keep = int(keep_a * len(a_idx) + 0.5 + 1e-9)
    keep = set(random.Random(seed).sample(a_idx, n_keep))
    return [
        {**r, "kept": i in keep if r["category"] == "A" else r["category"] in ("B", "C")}
        for i, r in enumerate(out)
    ]
