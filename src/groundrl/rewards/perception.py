"""EmbodiedBrain perception rewards: box IoU, detection, counting.

Detection (grounding) reward, per label ``c`` with gold boxes ``G_c`` and predicted boxes
``P_c`` matched one-to-one by the Hungarian algorithm
(:func:`scipy.optimize.linear_sum_assignment`, maximising ``Σ area(g) · IoU(g, p)``)::

    R_det = (Σ_g area(g) · IoU(g, π(g)) / Σ_g area(g)) · min(1, |G| / |P|)

where a gold box without a match contributes 0 and ``|P|`` counts every predicted
entry (malformed ones included), so extra boxes cost. This **deliberately differs from
the released EmbodiedBrain code**, which averages the IoU of matched boxes only and so
ignores both missed and extra boxes (predicting one easy box scores like finding all).

Counting reward: ``R_cnt = 1[ŷ = y]`` for the predicted integer ``ŷ``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from groundrl.parse.answers import (
    NUMBER_WORDS,
    after_last_think,
    extract_answer,
    normalize_answer,
    parse_answer_number,
)
from groundrl.parse.numbers import parse_exact_number
from groundrl.parse.result import Parsed
from groundrl.parse.structured import parse_literal
from groundrl.parse.tags import find_tag
from groundrl.types import Score

Box = tuple[float, float, float, float]
LabelledBox = tuple["str | None", Box]

_BOX_KEYS = ("bbox_2d", "bbox", "box", "box_2d")
_LABEL_KEYS = ("label", "name", "category")
# Candidate "[" / "{" positions tried with the JSON decoder; bounds the work on "[[[[…".
MAX_JSON_CANDIDATES = 256
_DECODER = json.JSONDecoder()
# "[" and JSON whitespace: the last "[" of such a stretch ends a run of "[" (see _json_values)
_BRACKET_RUN = re.compile(r"[\[ \t\n\r]*+").match
# [ours] boxes one side of a detection may hold (issue 42 N2: matching builds a
# |G| × |P| weight table, so 20,000 boxes a side asked for 400 M floats); far more than
# the objects one grounding question names. A prediction over the limit scores 0, a
# gold over it is not applicable, both with the reason, before any table is built.
MAX_BOXES = 512


def _box(b: Any) -> Box | None:
    if not isinstance(b, (list, tuple)) or len(b) != 4:
        return None
    x1, y1, x2, y2 = b
    # plain int / float (what JSON gives) first; anything else by the general rule:
    # an int or float that is not a bool (numpy floats pass, numpy ints do not)
    for c in b:
        if (
            c.__class__ is not float
            and c.__class__ is not int
            and (isinstance(c, bool) or not isinstance(c, (int, float)))
        ):
            return None
    try:
        x1, y1, x2, y2 = float(x1), float(y1), float(x2), float(y2)
    except OverflowError:  # an int beyond float range is not a finite coordinate
        return None
    if not (_isfinite(x1) and _isfinite(y1) and _isfinite(x2) and _isfinite(y2)):
        return None
    return x1, y1, x2, y2


_isfinite = math.isfinite


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _iou(ba: Box, bb: Box) -> float:
    """IoU of two boxes already read by :func:`_box`."""
    if ba[2] <= ba[0] or ba[3] <= ba[1] or bb[2] <= bb[0] or bb[3] <= bb[1]:
        return 0.0
    iw = min(ba[2], bb[2]) - max(ba[0], bb[0])
    ih = min(ba[3], bb[3]) - max(ba[1], bb[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / (_area(ba) + _area(bb) - inter)


def box_iou(a: Any, b: Any) -> float:
    """Intersection over union of continuous ``[x1, y1, x2, y2]`` boxes (no +1 pixel
    convention). 0 when either box is not four finite numbers or is degenerate
    (``x2 ≤ x1`` or ``y2 ≤ y1``)."""
    ba, bb = _box(a), _box(b)
    if ba is None or bb is None:
        return 0.0
    return _iou(ba, bb)


def _label(item: Mapping[str, object]) -> str | None:
    for k in _LABEL_KEYS:
        if item.get(k) is not None:
            return " ".join(str(item[k]).casefold().split())
    return None


def _entries(obj: Any) -> tuple[list[LabelledBox], int, bool] | None:
    """Boxes from one decoded value: (boxes, malformed entries, is_a_list_of_boxes);
    ``None`` when the value holds nothing box-like."""
    if isinstance(obj, dict):
        if not any(k in obj for k in _BOX_KEYS):
            return None
        b = _box(next(obj[k] for k in _BOX_KEYS if k in obj))
        return ([(_label(obj), b)], 0, False) if b else ([], 1, False)
    if not isinstance(obj, list):
        return None
    if len(obj) == 4 and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in obj):
        b = _box(obj)
        return ([(None, b)], 0, False) if b else ([], 1, False)
    boxes: list[LabelledBox] = []
    bad = 0
    for item in obj:
        if item.__class__ is dict and "bbox_2d" in item:
            # the Qwen2.5-VL form, read inline: the same (label, box) as _entries(item)
            # ("bbox_2d" is the first box key), a third of the cost on long lists
            b = _box(item["bbox_2d"])
            if b is None:
                bad += 1
                continue
            lab = item.get("label")
            boxes.append((" ".join(lab.casefold().split()) if lab.__class__ is str else _label(item), b))
            continue
        got = _entries(item) if isinstance(item, (dict, list)) else None
        if got is None or got[2]:  # nested lists of boxes are not read
            bad += 1
            continue
        boxes += got[0]
        bad += got[1]
    if not boxes and bad == len(obj) and obj:
        return None
    return boxes, bad, True


def _json_values(s: str) -> list[Any]:
    """Top-level JSON values in free text, left to right (at most
    :data:`MAX_JSON_CANDIDATES` decode attempts, each next "[" / "{" found once)."""
    out = []
    pos = 0
    nxt = {c: s.find(c) for c in "[{"}
    attempts, run_last = MAX_JSON_CANDIDATES, -1
    while attempts > 0:
        for c in "[{":
            if nxt[c] != -1 and nxt[c] < pos:
                nxt[c] = s.find(c, pos)
        starts = [i for i in nxt.values() if i != -1]
        if not starts:
            break
        i = min(starts)
        if i > run_last:
            # "[[[…": each "[" of the run opens an array whose first value is the array
            # opened by the next one, so when the last one's value does not decode, none
            # does; those attempts are counted, not made (each went ~1,000 levels deep
            # before failing: 40 ms per completion, issue 30)
            run = _BRACKET_RUN(s, i)  # '*+' matches the empty run too, so never None
            last = s.rfind("[", i, run.end()) if run else i
            if last > i:
                try:
                    _DECODER.raw_decode(s, last)
                except (ValueError, RecursionError):
                    attempts -= s.count("[", i, last + 1)
                    pos = last + 1
                    continue
                run_last = last  # it decodes: this run's "[" are tried one by one
        attempts -= 1
        try:
            obj, end = _DECODER.raw_decode(s, i)
        except (ValueError, RecursionError):
            pos = i + 1
            continue
        out.append(obj)
        pos = end
    return out


def _parse(value: Any) -> tuple[list[LabelledBox], int] | None:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, str):
        got = _entries(value)
        return None if got is None else (got[0], got[1])
    inner = find_tag(value, "answer", which="last")
    if inner is None:
        inner = after_last_think(value)
    values = _json_values(inner)
    if not values:
        start = min((i for i in (inner.find("["), inner.find("{")) if i != -1), default=-1)
        end = max(inner.rfind("]"), inner.rfind("}"))
        if start != -1 and end > start:
            lit = parse_literal(inner[start : end + 1])
            if lit.ok:
                values = [lit.value]
    lists: list[tuple[list[LabelledBox], int, bool]] = []
    singles: list[tuple[list[LabelledBox], int, bool]] = []
    for v in values:
        got = _entries(list(v) if isinstance(v, tuple) else v)
        if got is not None:
            (lists if got[2] else singles).append(got)
    if lists:
        return lists[-1][0], lists[-1][1]
    if singles:
        return [b for g in singles for b in g[0]], sum(g[1] for g in singles)
    return None


# Every completion of a prompt shares its gold: parse each gold string once, with what
# the reward derives from it (total area, whether labels count, boxes per label).
_GOLD_CACHE_MAX_CHARS = 32_768
_GoldInfo = tuple  # (boxes, malformed, total area, use_labels, {label: ((box, area), ...)})


def _gold_info_uncached(gold: Any) -> _GoldInfo | None:
    got = _parse(gold)
    if got is None:
        return None
    boxes, bad = got
    den = sum(_area(b) for _, b in boxes)
    use_labels = any(lab is not None for lab, _ in boxes)
    by_g: dict[str | None, list[tuple[Box, float]]] = {}
    for lab, b in boxes:
        by_g.setdefault(lab if use_labels else None, []).append((b, _area(b)))
    return tuple(boxes), bad, den, use_labels, {k: tuple(v) for k, v in by_g.items()}


@lru_cache(maxsize=4096)
def _gold_info_cached(gold: str) -> _GoldInfo | None:
    return _gold_info_uncached(gold)


def _gold_info(gold: Any) -> _GoldInfo | None:
    if type(gold) is str and len(gold) <= _GOLD_CACHE_MAX_CHARS:
        return _gold_info_cached(gold)
    return _gold_info_uncached(gold)


def parse_boxes(value: Any) -> list[LabelledBox] | None:
    """Predicted or gold boxes as ``[(label or None, (x1, y1, x2, y2)), …]``; ``None``
    when nothing box-like is found. Labels are case-folded, whitespace collapsed.

    Accepted: a list of objects ``{"bbox_2d": [x1, y1, x2, y2], "label": ".."}``
    (Qwen2.5-VL grounding JSON; box key also ``bbox`` / ``box`` / ``box_2d``, label key
    also ``name`` / ``category``), a list of ``[x1, y1, x2, y2]``, one such object or
    box, as Python values or in text. In text: inside the last ``<answer>…</answer>``
    when present (else after the last ``</think>``), JSON values are decoded left to
    right (fenced or not); the **last list** of boxes wins (a restated answer is not
    counted twice), else every single box object / ``[x1, y1, x2, y2]`` in order
    ("[0, 0, 2, 2] and [4, 4, 6, 6]" is two boxes). Text with no JSON is tried as one
    Python literal (single quotes, tuples). Entries that are not four finite numbers
    are dropped here (but count as predictions in :func:`detection_reward`).
    """
    got = _parse(value)
    return None if got is None else got[0]


def detection_reward(completion_or_boxes: Any, gold: Any) -> Score:
    """Area-weighted, Hungarian-matched IoU with miss and extra-box costs (module
    docstring). Gold and prediction take the forms of :func:`parse_boxes`.

    Labels: when no gold box has a label, predicted labels are ignored (one pool);
    otherwise boxes match only within the same label, and an unlabelled prediction
    matches only unlabelled gold. Edge cases: no usable gold (nothing box-like, or
    all gold areas 0) → not applicable (``None``); empty gold list → 1 when the
    prediction is an empty list, 0 when it has boxes; nothing box-like in the
    prediction → 0."""
    g = _gold_info(gold)
    if g is None:
        return Score("detection", None, "gold boxes unusable")
    gboxes, g_bad, den, use_labels, by_g = g
    p = _parse(completion_or_boxes)
    if p is None:
        return Score("detection", 0.0, "no boxes found in the prediction")
    pboxes, p_bad = p
    n_pred = len(pboxes) + p_bad
    if len(gboxes) + g_bad > MAX_BOXES:
        return Score(
            "detection", None, f"gold holds {len(gboxes) + g_bad} boxes; at most {MAX_BOXES} are matched"
        )
    if n_pred > MAX_BOXES:
        return Score("detection", 0.0, f"{n_pred} predicted boxes; at most {MAX_BOXES} are matched")
    if not gboxes:
        if g_bad:
            return Score("detection", None, "gold boxes unusable")
        return Score("detection", 1.0 if n_pred == 0 else 0.0, f"no gold boxes, {n_pred} predicted")
    if den <= 0:
        return Score("detection", None, "gold boxes have no area")
    if not _isfinite(den):
        return Score("detection", None, "gold box areas overflow a float")
    if n_pred == 0:
        return Score("detection", 0.0, f"no predicted boxes, {len(gboxes)} gold")
    by_p: dict[str | None, list[Box]] = {}
    for lab, b in pboxes:
        by_p.setdefault(lab if use_labels else None, []).append(b)
    num = 0.0
    for lab, gs in by_g.items():
        ps = by_p.get(lab)
        if not ps:
            continue
        rows_w = [[a * _iou(gb, pb) for pb in ps] for gb, a in gs]
        if len(gs) == 1 or len(ps) == 1:
            # one box on a side: the best one-to-one matching is the largest weight
            num += max(w for row in rows_w for w in row)
            continue
        # lazy: scipy.optimize loads only for the Hungarian matching
        from scipy.optimize import linear_sum_assignment

        w = np.array(rows_w)
        rows, cols = linear_sum_assignment(w, maximize=True)
        num += float(w[rows, cols].sum())
    coverage = num / den
    extra = min(1.0, len(gboxes) / n_pred)
    why = f"area-weighted IoU {coverage:.3f} × min(1, {len(gboxes)} gold / {n_pred} predicted)"
    if p_bad:
        why += f"; {p_bad} malformed predicted entries"
    if g_bad:
        why += f"; {g_bad} malformed gold entries ignored"
    return Score("detection", coverage * extra, why)


def counting_reward(completion: Any, gold_count: Any) -> Score:
    """``1[ŷ = y]``: ``ŷ`` is the number the final answer states
    (:func:`~groundrl.parse.answers.extract_answer` then
    :func:`~groundrl.parse.answers.parse_answer_number`: the whole answer as a number or
    a number word zero–twenty, else its first number); "3.0" counts as 3, "3.5" does
    not. The gold is a whole number (``3``, ``"3"``, ``3.0``, ``"three"``); anything else
    → not applicable (``None``)."""
    gold = parse_exact_number(gold_count)
    if not gold.ok and isinstance(gold_count, str) and normalize_answer(gold_count) in NUMBER_WORDS:
        gold = Parsed(NUMBER_WORDS[normalize_answer(gold_count)])
    if not gold.ok or gold.value != int(gold.value):
        return Score("counting", None, f"gold count {gold_count!r:.40} is not a whole number")
    ans = extract_answer(completion)
    if not ans.ok:
        return Score("counting", 0.0, ans.error)
    n = parse_answer_number(ans.value)
    if not n.ok:
        return Score("counting", 0.0, "no number in the answer")
    return Score("counting", float(n.value == gold.value), f"{n.value:g} vs gold {gold.value:g}")
