"""EmbodiedBrain's two-stage rejection sampling.

Stage 1: k baseline answers per sample judged against the gold → category A (all k
correct), B (some), C (none, but a stronger model's answer matches the gold), D (none and
neither does the stronger model). D is dropped, a seeded fraction ``keep_a`` of A is kept,
B and C are kept. Stage 2 (oracle check): when the stronger model's answer contradicts the
gold, the label is flagged ``suspect_label`` (kept or not by its category)."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import Any

from groundrl.parse.answers import normalize_answer

Judge = Callable[[Any, Any], bool]


def exact_judge(answer: Any, gold: Any) -> bool:
    return normalize_answer(answer) == normalize_answer(gold) and normalize_answer(gold) != ""


def consensus(
    record: dict[str, Any], keep_a: float = 0.2, seed: int = 0, judge: Judge = exact_judge
) -> dict[str, Any]:
    """``{id, gold, answers: [k], strong_answer?}`` → ``{id, category, kept, n_correct, suspect_label}``."""
    if not 0 <= keep_a <= 1:
        raise ValueError(f"keep_a must be in [0, 1], got {keep_a}")
    gold = record.get("gold")
    answers = record.get("answers") or []
    n_ok = sum(bool(judge(a, gold)) for a in answers)
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
    if cat == "A":
        kept = random.Random(zlib.crc32(f"{seed}|{record.get('id')}".encode())).random() < keep_a
    else:
        kept = cat in ("B", "C")
    return {
        "id": record.get("id"),
        "category": cat,
        "kept": kept,
        "n_correct": n_ok,
        "suspect_label": strong is not None and not strong_ok,
    }
