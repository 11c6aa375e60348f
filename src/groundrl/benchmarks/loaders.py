"""Loaders for public data in other formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NotRequired, TypedDict


def llm_match_to_10(score: float) -> float:
    """OpenEQA LLM-match 1–5 → our 0–10 scale, linear: ``10 · (s − 1) / 4`` (so OpenEQA's
    own score ``100 · mean((s − 1)/4)`` is 10 × our mean)."""
    return 10.0 * (float(score) - 1.0) / 4.0


class OpenEQAScoreItem(TypedDict):
    """A score-rm item made from an OpenEQA prediction (``frames``: set by
    ``bench openeqa-format --frames-root``)."""

    id: object
    question: str
    reasoning: str
    answer: object
    reference: object
    gt_score: float
    category: object
    source: str
    frames: NotRequired[list[str] | None]


class PlanningItem(TypedDict):
    """An EmbodiedBrain planning item (``prediction``: filled from --predictions)."""

    id: str
    task: object
    gold: object
    images: object
    prediction: NotRequired[object]


def openeqa_items(
    questions: str | Path, predictions: str | Path, gold_scores: str | Path
) -> list[OpenEQAScoreItem]:
    """OpenEQA questions + a predictions file (``[{question_id, answer}]``) + an LLM-match
    metrics file (``{question_id: 1..5}``) → score-rm items. The prediction has no
    reasoning trace, so ``reasoning`` says so; ``source`` is the episode's dataset
    (``hm3d-v0`` / ``scannet-v0``)."""
    qs = {q["question_id"]: q for q in json.loads(Path(questions).read_text())}
    preds = json.loads(Path(predictions).read_text())
    scores = json.loads(Path(gold_scores).read_text())
    items: list[OpenEQAScoreItem] = []
    for p in preds:
        qid = p["question_id"]
        if qid not in scores or qid not in qs:
            continue
        q = qs[qid]
        items.append(
            {
                "id": qid,
                "question": q["question"],
                "reasoning": "(no reasoning trace; judge the answer against the scene)",
                "answer": p["answer"],
                "reference": q["answer"],
                "gt_score": llm_match_to_10(scores[qid]),
                "category": q.get("category", "all"),
                "source": q.get("episode_history", "").split("/")[0] or "all",
            }
        )
    return items


def embodiedbrain_planning_items(path: str | Path) -> list[PlanningItem]:
    """The EmbodiedBrain planning set (conversations: user task + assistant gold answer)
    → ``{id, task, gold, images}`` items (``prediction`` to be filled)."""
    rows = json.loads(Path(path).read_text())
    out: list[PlanningItem] = []
    for k, r in enumerate(rows):
        conv = r.get("conversations") or []
        user = next((c["content"] for c in conv if c.get("role") == "user"), "")
        gold = next((c["content"] for c in conv if c.get("role") == "assistant"), "")
        out.append({"id": f"eb-{k}", "task": user, "gold": gold, "images": r.get("images", [])})
    return out
