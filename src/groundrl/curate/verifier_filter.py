"""Argos SFT data filtering: score a sample's N rollouts with the agentic verifier and keep
the sample when its best rollout scores ≥ ``threshold`` (default 0.7) while its outcome
is right (outcome part = 1); write the best rollout with its breakdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from groundrl.verify import AgenticVerifier


class VerifierFilterResult(TypedDict):
    """:func:`verifier_filter`'s row (``best_rollout`` and ``tools`` when there were rollouts)."""

    id: object
    kept: bool
    best_index: int | None
    best_score: float | None
    best_rollout: NotRequired[str]
    parts: dict[str, float | None]
    tools: NotRequired[dict[str, str]]  # tool → why it applied
    reason: str


def verifier_filter(
    record: Mapping[str, Any], verifier: AgenticVerifier, threshold: float = 0.7
) -> VerifierFilterResult:
    rollouts = [r if isinstance(r, str) else "" for r in (record.get("rollouts") or [])]
    if not rollouts:
        return {
            "id": record.get("id"),
            "kept": False,
            "best_index": None,
            "best_score": None,
            "parts": {},
            "reason": "no rollouts",
        }
    sample = {k: v for k, v in record.items() if k != "rollouts"}
    results = verifier.verify(rollouts, [sample] * len(rollouts))
    best = max(range(len(results)), key=lambda i: (results[i].total, -i))
    r = results[best]
    outcome_ok = r.parts.get("outcome") is not None and r.parts["outcome"].value == 1.0
    kept = r.total >= threshold and outcome_ok
    reason = (
        "kept" if kept else ("outcome wrong" if not outcome_ok else f"best score {r.total:.3f} < {threshold}")
    )
    return {
        "id": record.get("id"),
        "kept": kept,
        "best_index": best,
        "best_score": r.total,
        "best_rollout": rollouts[best],
        "parts": {k: s.value for k, s in r.parts.items()},
        "tools": r.chosen,
        "reason": reason,
    }
