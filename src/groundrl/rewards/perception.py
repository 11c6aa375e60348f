"""EmbodiedBrain perception rewards: box IoU, detection, counting.

Detection deliberately differs from the released EmbodiedBrain code, which averages
the IoU of matched boxes only and so ignores missed and extra boxes: here unmatched
gold boxes score 0 and extra predictions scale the reward down.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

import numpy as np

from groundrl.parse.answers import extract_answer
from groundrl.parse.numbers import parse_exact_number, parse_number
from groundrl.parse.structured import parse_literal
from groundrl.types import Score

Box = tuple[float, float, float, float]


def _box(b: Any) -> Box | None:
    if not isinstance(b, (list, tuple)) or len(b) != 4:
        return None
    try:
        x1, y1, x2, y2 = (float(c) for c in b)
    except (TypeError, ValueError):
        return None
    if not all(math.isfinite(c) for c in (x1, y1, x2, y2)):
        return None
    return x1, y1, x2, y2


def box_iou(a: Any, b: Any) -> float:
    """Intersection over union of continuous ``[x1, y1, x2, y2]`` boxes; 0 for invalid or
    degenerate boxes (``x2 ≤ x1`` or ``y2 ≤ y1``)."""
    ba, bb = _box(a), _box(b)
    if ba is None or bb is None:
        return 0.0
    ax1, ay1, ax2, ay2 = ba
    bx1, by1, bx2, by2 = bb
    if ax2 <= ax1 or ay2 <= ay1 or bx2 <= bx1 or by2 <= by1:
        return 0.0
    iw = max(0.0, min(ax2, bx2) - max(ax1, bx1))
    ih = max(0.0, min(ay2, by2) - max(ay1, by1))
    inter = iw * ih
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return inter / union if union > 0 else 0.0


def _load(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    s = value.strip()
    if s.startswith("```"):
        s = s.strip("`")
        s = s[4:] if s.lower().startswith("json") else s
    start = min((i for i in (s.find("["), s.find("{")) if i >= 0), default=-1)
    if start < 0:
        return None
    s = s[start:]
    try:
        return json.loads(s)
    except (ValueError, RecursionError):
        r = parse_literal(s)
        return r.value


def parse_boxes(value: Any) -> list[tuple[str | None, Box]] | None:
    """Boxes with optional labels from: a list of ``{"bbox_2d": [..], "label": ".."}``
    (Qwen2.5-VL grounding JSON; ``"bbox"``/``"box"`` also accepted), a list of
    ``[x1, y1, x2, y2]``, one such dict, or text holding any of these (a fenced JSON
    block or the first JSON/Python literal in it). ``None`` when nothing parses."""
    obj = _load(value)
    if isinstance(obj, dict):
        obj = [obj]
    if not isinstance(obj, list):
        return None
    out: list[tuple[str | None, Box]] = []
    for item in obj:
        if isinstance(item, dict):
            raw = item.get("bbox_2d", item.get("bbox", item.get("box")))
            label = item.get("label")
            b = _box(raw)
            if b is not None:
                out.append((" ".join(str(label).casefold().split()) if label is not None else None, b))
        else:
            b = _box(item)
            if b is not None:
                out.append((None, b))
    return out


def detection_reward(completion_or_boxes: Any, gold: Any) -> Score:
    """``R = (Σ_gold area · IoU(matched pred) / Σ_gold area) · min(1, |gold| / |pred|)``.

    Predictions are matched one-to-one to gold boxes of the same label by the Hungarian
    algorithm on IoU; a gold box without a match contributes 0. No gold and no
    prediction → 1; no gold but predictions → 0; unparseable prediction → 0.
    """
    g = parse_boxes(gold)
    if g is None:
        return Score("detection", None, "gold boxes unusable")
    p = parse_boxes(completion_or_boxes)
    if p is None:
        return Score("detection", 0.0, "no boxes found in the prediction")
    if not g:
        return Score("detection", 1.0 if not p else 0.0, "no gold boxes")
    if not p:
        return Score("detection", 0.0, "no predicted boxes")
    from scipy.optimize import linear_sum_assignment

    by_label_g: dict[str | None, list[Box]] = defaultdict(list)
    by_label_p: dict[str | None, list[Box]] = defaultdict(list)
    for lab, b in g:
        by_label_g[lab].append(b)
    for lab, b in p:
        by_label_p[lab].append(b)
    num = 0.0
    den = sum(max(0.0, (b[2] - b[0]) * (b[3] - b[1])) for _, b in g)
    for lab, gboxes in by_label_g.items():
        pboxes = by_label_p.get(lab, [])
        if not pboxes:
            continue
        iou = np.array([[box_iou(pb, gb) for gb in gboxes] for pb in pboxes])
        rows, cols = linear_sum_assignment(iou, maximize=True)
        for r, c in zip(rows, cols, strict=True):
            gb = gboxes[c]
            num += max(0.0, (gb[2] - gb[0]) * (gb[3] - gb[1])) * iou[r, c]
    if den <= 0:
        return Score("detection", 0.0, "gold boxes have no area")
    penalty = min(1.0, len(g) / len(p))
    return Score(
        "detection",
        num / den * penalty,
        f"area-weighted IoU {num / den:.3f}, {len(p)} predicted vs {len(g)} gold",
    )


def counting_reward(completion: Any, gold_count: Any) -> Score:
    """1 if the predicted integer (the final answer's number) equals the gold count."""
    gold = parse_exact_number(gold_count)
    if not gold.ok or gold.value != int(gold.value):
        return Score("counting", None, f"gold count {gold_count!r} is not an integer")
    ans = extract_answer(completion)
    if not ans.ok:
        return Score("counting", 0.0, ans.error)
    n = parse_exact_number(ans.value)
    if not n.ok:
        n = parse_number(ans.value)
    if not n.ok:
        return Score("counting", 0.0, "no number in the answer")
    return Score("counting", float(n.value == gold.value), f"{n.value:g} vs {gold.value:g}")
