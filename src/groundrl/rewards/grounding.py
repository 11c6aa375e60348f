"""Argos grounding: do the points a response cites land on the object it names
(:func:`spatial`), and the one grounding term of Eq. 9 (:func:`grounding_term`)?

``R_spatial = (1 / |P|) Σ_{p ∈ P} 1[mask(label_p)(x_p, y_p)]`` over the points ``P`` of
:func:`~groundrl.parse.grounding.extract_points`; **not applicable** (``None``) when the
response cites no points, or the sample has no masks at all.

Masks, per label (looked up with case and whitespace normalised; a point whose label
has no mask scores 0 and the reason lists the unknown labels):

* a 2-D array-like indexed ``mask[y][x]`` — numpy array, nested lists of ``bool``, or
  ``{"mask": [[…]]}`` (use this form for 0/1 integer lists, which could read as boxes);
  a value counts as inside when truthy; leading size-1 axes (``1×H×W``) are squeezed;
  pixel ``(i, j)`` covers ``[i, i+1) × [j, j+1)``, so a point is looked up at
  ``(floor(x), floor(y))``; a point outside the array scores 0;
* boxes ``[[x1, y1, x2, y2], …]`` (rows of four numbers), one box ``[x1, y1, x2, y2]``,
  or ``{"boxes": […]}``: inside any box, edges inclusive;
* ``None``: no mask for this label.

``points_masks`` is a mapping ``label → mask``, a JSON string of one, or a
:class:`MaskProvider` — any callable ``(label) -> mask | None`` (called once per distinct
label; one that raises counts as no mask).

Coordinates: by default (``coord_scale=None``) points are pixels of the image the masks
are drawn on. The Argos paper does not fix a unit; models that emit normalised
coordinates pass ``coord_scale`` — 100 for Molmo-style percentages, 1000 for
Qwen2-VL-style 0–1000 — and array masks are then hit at
``(x · W / coord_scale, y · H / coord_scale)``. Boxes carry no image size, so with a
``coord_scale`` they must be given in that same normalised frame.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from groundrl.parse.grounding import FrameMention, Point, extract_points, frame_index
from groundrl.parse.tags import iter_tag_spans
from groundrl.types import Score

# Declared sizes are bounded before anything is allocated from them (issue 42 N2: a
# sample naming frame 10**12 built a list of 10**12 frame times). [ours] MAX_FRAMES is
# about an hour at 27 fps, far past Argos' "maximum limit of 32 frames" [Argos §4.1]; a
# sample declaring more scores 0 with the reason (never "not applicable": that would
# lift Eq. 9's gated mean above what an honest trace earns).
MAX_FRAMES = 100_000
# [ours] 8192 × 8192: a mask larger than that is not of an image a VLM sees
MAX_MASK_PIXELS = 1 << 26
# [ours] boxes one label's mask may hold: every cited point is tested against each
MAX_MASK_BOXES = 1024


@runtime_checkable
class MaskProvider(Protocol):
    """Anything callable as ``provider(label) -> mask | boxes | None``."""

    def __call__(self, label: str) -> Any: ...


def _norm(label: Any) -> str:
    return " ".join(str(label).casefold().split())


def _is_number(c: Any) -> bool:
    return isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, (bool, np.bool_))


def _is_box(b: Any) -> bool:
    return isinstance(b, (list, tuple)) and len(b) == 4 and all(_is_number(c) for c in b)


def masks_from_boxes(boxes: Any) -> dict[str, dict[str, list[list[float]]]]:
    """Box annotations → ``{label: {"boxes": [[x1, y1, x2, y2], …]}}``, the explicit form
    :func:`spatial` reads. Accepts ``{label: [[x1, y1, x2, y2], …]}`` (or one box per
    label) or a Qwen2.5-VL-style list ``[{"bbox_2d": [..], "label": ".."}, …]``
    (``"bbox"`` / ``"box"`` also read). Raises ``ValueError`` naming the first entry
    that is not four finite numbers."""
    pairs: list[tuple[str, Any]] = []
    if isinstance(boxes, Mapping):
        for label, bs in boxes.items():
            for b in [bs] if _is_box(bs) else list(bs) if isinstance(bs, (list, tuple)) else [bs]:
                pairs.append((str(label), b))
    elif isinstance(boxes, (list, tuple)):
        for item in boxes:
            if not isinstance(item, Mapping) or "label" not in item:
                raise ValueError(f"expected {{'bbox_2d': [x1, y1, x2, y2], 'label': ...}}, got {item!r:.80}")
            pairs.append((str(item["label"]), item.get("bbox_2d", item.get("bbox", item.get("box")))))
    else:
        raise ValueError(
            f"boxes must be a mapping label -> boxes or a list of labelled boxes, got {type(boxes).__name__}"
        )
    out: dict[str, dict[str, list[list[float]]]] = {}
    for label, b in pairs:
        if not _is_box(b) or not all(math.isfinite(float(c)) for c in b):
            raise ValueError(f"box for {label!r} must be [x1, y1, x2, y2] of finite numbers, got {b!r:.80}")
        out.setdefault(label, {"boxes": []})["boxes"].append([float(c) for c in b])
    return out


class _Region:
    """One label's mask, resolved once: ``contains(point)`` or unusable (``why``)."""

    def __init__(self, region: Any, coord_scale: float | None) -> None:
        self.boxes: list[tuple[float, float, float, float]] | None = None
        self.array: np.ndarray | None = None
        self.why = ""
        self.coord_scale = coord_scale
        if isinstance(region, Mapping):
            if "boxes" in region:
                region = region["boxes"]
                if _is_box(region):
                    region = [region]
                self._set_boxes(region)
                return
            if "mask" not in region:
                self.why = "mapping without 'mask' or 'boxes'"
                return
            region = region["mask"]
        elif _is_box(region):
            self._set_boxes([region])
            return
        elif isinstance(region, (list, tuple)) and region and all(_is_box(b) for b in region):
            self._set_boxes(region)
            return
        try:
            arr = np.asarray(region)
        except Exception:  # ragged nested lists and odd objects
            self.why = "not an array"
            return
        while arr.ndim > 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.size > MAX_MASK_PIXELS:  # a view (np.broadcast_to) may declare any size
            self.why = f"mask of {arr.size} pixels, over the {MAX_MASK_PIXELS}-pixel limit"
            return
        if arr.ndim != 2 or arr.size == 0 or arr.dtype == object:
            self.why = f"not a 2-D mask (shape {arr.shape})"
            return
        self.array = arr

    def _set_boxes(self, boxes: Any) -> None:
        if isinstance(boxes, (list, tuple)) and len(boxes) > MAX_MASK_BOXES:
            self.why = f"{len(boxes)} boxes, over the {MAX_MASK_BOXES}-box limit"
            return
        out = []
        for b in boxes if isinstance(boxes, (list, tuple)) else []:
            if _is_box(b):
                x1, y1, x2, y2 = (float(c) for c in b)
                if all(math.isfinite(c) for c in (x1, y1, x2, y2)):
                    out.append((min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)))
        if out:
            self.boxes = out
        else:
            self.why = "no valid [x1, y1, x2, y2] box"

    def contains(self, p: Point) -> bool:
        if self.boxes is not None:
            return any(x1 <= p.x <= x2 and y1 <= p.y <= y2 for x1, y1, x2, y2 in self.boxes)
        assert self.array is not None
        h, w = self.array.shape
        x, y = p.x, p.y
        if self.coord_scale is not None:
            x, y = x * w / self.coord_scale, y * h / self.coord_scale
        if not (0 <= x < w and 0 <= y < h):
            return False
        return bool(self.array[int(math.floor(y)), int(math.floor(x))])


def _check_scale(coord_scale: Any) -> float | None:
    if coord_scale is None:
        return None
    if isinstance(coord_scale, bool) or not _is_number(coord_scale) or not (0 < coord_scale < math.inf):
        raise ValueError(
            f"coord_scale must be None (pixels) or a positive number such as 1000, got {coord_scale!r}"
        )
    return float(coord_scale)


def spatial(completion: Any, points_masks: Any = None, coord_scale: float | None = None) -> Score:
    """Fraction of cited points inside the mask of their label (see the module
    docstring). ``coord_scale`` that is not ``None`` or a positive number raises."""
    scale = _check_scale(coord_scale)
    points = extract_points(completion)
    if not points:
        return Score("spatial", None, "no points cited")
    if isinstance(points_masks, str):
        try:
            points_masks = json.loads(points_masks)
        except (ValueError, RecursionError):
            return Score("spatial", None, "points_masks is a string but not JSON")
    if points_masks is None:
        return Score("spatial", None, "no masks in the sample")
    if isinstance(points_masks, Mapping):
        table = {_norm(k): v for k, v in points_masks.items()}

        def raw(label: str) -> Any:
            return table.get(label)
    elif callable(points_masks):

        def raw(label: str) -> Any:
            try:
                return points_masks(label)
            except Exception:  # a failing provider is a missing mask, not a crash
                return None
    else:
        return Score(
            "spatial",
            None,
            f"points_masks must be a mapping or a provider, got {type(points_masks).__name__}",
        )
    regions: dict[str, _Region | None] = {}
    hits = 0
    unknown: dict[str, None] = {}
    unusable: dict[str, str] = {}
    for p in points:
        key = _norm(p.label)
        if key not in regions:
            r = raw(key) if isinstance(points_masks, Mapping) else raw(p.label)
            regions[key] = None if r is None else _Region(r, scale)
        region = regions[key]
        if region is None:
            unknown[p.label] = None
        elif region.why:
            unusable[p.label] = region.why
        else:
            hits += region.contains(p)
    reason = f"{hits}/{len(points)} points inside their masks"
    if unknown:
        reason += "; no mask for " + ", ".join(repr(k) for k in unknown)
    if unusable:
        reason += "; unusable mask for " + ", ".join(f"{k!r} ({v})" for k, v in unusable.items())
    return Score("spatial", hits / len(points), reason)


GROUNDING_CATEGORIES = ("spatial", "frame_grounding", "segment_grounding")


def grounding_term(categories: Mapping[str, Score | None]) -> Score:
    """Argos' one visual-grounding term: the unweighted mean of the within-category means
    [Argos §3.1 "Temporal rewards", App. D: "first averaging the scores within each
    category before averaging over them"]. ``categories`` maps ``spatial`` (mean over
    cited points), ``frame_grounding`` (mean over frame-level mentions) and
    ``segment_grounding`` (mean over segment-level mentions) to their Scores; a category
    that is absent or not applicable (``value`` ``None``) is left out of the mean. ``None``
    when no category applies. This term enters Eq. 9 once, with weight ``w_G``.

    >>> grounding_term({"spatial": Score("spatial", 1.0), "frame_grounding": Score("f", 0.0),
    ...                 "segment_grounding": Score("s", 0.0)}).value
    0.3333333333333333
    """
    used = {k: float(v) for k, s in categories.items() if s is not None and (v := s.value) is not None}
    skipped = [k for k in categories if k not in used]
    if not used:
        return Score("grounding", None, "no grounding category applies")
    value = sum(used.values()) / len(used)
    why = "mean of " + ", ".join(f"{k}={v:.3g}" for k, v in used.items())
    if skipped:
        why += "; not applicable: " + ", ".join(skipped)
    return Score("grounding", value, why)


# --- video: each point scored on its own frame ------------------------------------

# Whitespace and digits possessive: what follows cannot start with either, and two
# adjacent \s* tried every split of a whitespace run ("frame" + spaces: quadratic, issue 41).
_FRAME_NUM_RE = re.compile(r"\bframe\s*+#?\s*+(\d++)\b(?!\s*+(?:-|–|to\b|through\b))", re.IGNORECASE)
_SECONDS_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*+(?:seconds?|secs?|s)\b", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|\n")


def point_frame_mentions(text: str) -> list[tuple[Point, FrameMention | None]]:
    """Each cited point with the frame it is drawn on: the nearest ``frame N`` before it
    in the same sentence, else the nearest ``t seconds`` there, else ``None`` (Argos'
    video traces write "in frame 24 at 18.71 seconds … <points …>" [Argos App. D, Fig. 6];
    the paper extracts the pairs with an LLM, we read them from the text). Linear."""
    if not isinstance(text, str):
        return []
    spans = sorted((s[0], s[3]) for tag in ("points", "point") for s in iter_tag_spans(text, tag))
    frames = [(m.start(), int(m.group(1)), m.group(0)) for m in _FRAME_NUM_RE.finditer(text)]
    secs = [(m.start(), float(m.group(1)), m.group(0)) for m in _SECONDS_RE.finditer(text)]
    ends = [m.start() for m in _SENTENCE_END_RE.finditer(text)]
    out: list[tuple[Point, FrameMention | None]] = []
    fi = si = ei = 0
    last_f = last_s = None
    sentence_start = 0
    for pos, end in spans:
        while ei < len(ends) and ends[ei] < pos:
            sentence_start = ends[ei]
            ei += 1
        while fi < len(frames) and frames[fi][0] < pos:
            last_f = frames[fi]
            fi += 1
        while si < len(secs) and secs[si][0] < pos:
            last_s = secs[si]
            si += 1
        mention = None
        if last_f is not None and last_f[0] >= sentence_start:
            mention = FrameMention(float(last_f[1]), "frame", last_f[2], "")
        elif last_s is not None and last_s[0] >= sentence_start:
            mention = FrameMention(last_s[1], "second", last_s[2], "")
        # the points of one tag share its frame
        out += [(p, mention) for p in extract_points(text[pos:end])]
    return out


def spatial_video(
    completion: Any,
    frame_masks: Any,
    n_frames: int | None = None,
    fps: Any = None,
    timestamps: Any = None,
    coord_scale: float | None = None,
) -> Score:
    """Spatial grounding for a video trace: each point is looked up in the masks of the
    frame it cites (:func:`point_frame_mentions`, frames 1-based as in Argos' traces)
    [Argos §3.1 "Temporal rewards": the identified frame is analogous to an image].

    ``frame_masks``: ``{frame number (1-based, int or str): {label: mask}}``, a list of
    such tables in frame order, or a callable ``(label, frame_index_0_based) -> mask``.
    A point with no frame mention in its sentence, or whose frame is not in the video,
    scores 0 [ours: it cannot be verified]. ``None`` (not applicable) without points.

    >>> text = 'In frame 2 the <points x1="5" y1="5" alt="cup">cup</points> is red.'
    >>> spatial_video(text, {2: {"cup": [[0, 0, 9, 9]]}, 1: {}}).value
    1.0
    """
    scale = _check_scale(coord_scale)
    pairs = point_frame_mentions(completion)
    if not pairs:
        return Score("spatial", None, "no points cited")
    if isinstance(frame_masks, str):
        try:
            frame_masks = json.loads(frame_masks)
        except (ValueError, RecursionError):
            return Score("spatial", None, "frame_masks is a string but not JSON")
    lookup = _frame_lookup(frame_masks)
    if lookup is None:
        return Score("spatial", None, "no frame_masks in the sample")
    get, count = lookup
    n = n_frames if isinstance(n_frames, int) and not isinstance(n_frames, bool) and n_frames > 0 else count
    if n > MAX_FRAMES:  # before frame_index builds one time per frame
        return Score("spatial", 0.0, f"the sample declares {n} frames; at most {MAX_FRAMES} are scored")
    hits, misses = 0, []
    for p, mention in pairs:
        if mention is None:
            misses.append(f"{p.label!r}: no frame named in its sentence")
            continue
        at = frame_index(mention, n, fps, timestamps)
        if not at.ok:
            misses.append(f"{p.label!r}: {at.error}")
            continue
        region = get(p.label, at.value)
        r = None if region is None else _Region(region, scale)
        if r is None or r.why:
            misses.append(f"{p.label!r}: no usable mask on frame {at.value + 1}")
        elif r.contains(p):
            hits += 1
    reason = f"{hits}/{len(pairs)} points inside their masks on their own frames"
    if misses:
        reason += "; " + "; ".join(misses[:5])
    return Score("spatial", hits / len(pairs), reason)


def _frame_lookup(frame_masks: Any) -> tuple[Any, int] | None:
    """``(get(label, index0) -> mask | None, frame count)`` for the accepted forms."""
    if callable(frame_masks) and not isinstance(frame_masks, Mapping):

        def call(label: str, k: int) -> Any:
            try:
                return frame_masks(label, k)
            except Exception:  # a failing provider is a missing mask
                return None

        return call, MAX_FRAMES
    if isinstance(frame_masks, Mapping):
        tables: dict[int, Any] = {}
        for key, table in frame_masks.items():
            try:
                tables[int(key) - 1] = table
            except (TypeError, ValueError):
                continue
        count = max(tables, default=-1) + 1
    elif isinstance(frame_masks, (list, tuple)):
        tables = dict(enumerate(frame_masks))
        count = len(frame_masks)
    else:
        return None

    normalised: dict[int, dict[str, object]] = {}  # masks are passed through, never read

    def get(label: str, k: int) -> Any:
        table = tables.get(k)
        if not isinstance(table, Mapping):
            return None
        if k not in normalised:
            normalised[k] = {_norm(a): v for a, v in table.items()}
        return normalised[k].get(_norm(label))

    return get, count
