"""Argos spatial grounding: do the points a response cites land on the object it names?

``R_spatial = mean over points of [mask(label)(x, y)]``, not applicable (``None``) when
the response cites no points or the sample carries no masks.

Masks per label come as:

* a 2-D boolean array-like indexed ``mask[y][x]`` (numpy array, or ``{"mask": [[…]]}``
  for JSON), out-of-bounds points scoring 0;
* boxes ``[[x1, y1, x2, y2], …]`` (or ``{"boxes": […]}``), a point inside any box
  (edges inclusive) scoring 1;
* a :class:`MaskProvider`: a callable ``label -> mask | boxes | None``.

Coordinates are pixels of the image the masks are drawn on. For models that emit
normalised coordinates (e.g. Qwen-style 0–1000), pass ``coord_scale=1000``: points are
mapped onto array masks by ``x · width / coord_scale`` (boxes must then be given in the
same normalised frame). A point whose label has no mask scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from groundrl.parse.grounding import Point, extract_points
from groundrl.types import Score


class MaskProvider(Protocol):
    def __call__(self, label: str) -> Any: ...


def _norm(label: str) -> str:
    return " ".join(str(label).casefold().split())


def _is_boxes(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return False
    return (
        isinstance(v, (list, tuple))
        and len(v) > 0
        and all(
            isinstance(b, (list, tuple))
            and len(b) == 4
            and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in b)
            for b in v
        )
    )


def masks_from_boxes(boxes: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{label: [[x1, y1, x2, y2], …]}`` → the explicit ``{label: {"boxes": …}}`` form."""
    return {label: {"boxes": [list(map(float, b)) for b in bs]} for label, bs in boxes.items()}


def _hit(region: Any, p: Point, coord_scale: float | None) -> bool:
    if isinstance(region, Mapping):
        if "boxes" in region:
            region = region["boxes"]
            return _in_boxes(region, p)
        if "mask" in region:
            region = region["mask"]
        else:
            return False
    if _is_boxes(region):
        return _in_boxes(region, p)
    arr = np.asarray(region)
    if arr.ndim != 2 or arr.size == 0:
        return False
    h, w = arr.shape
    x, y = p.x, p.y
    if coord_scale:
        x, y = x * w / coord_scale, y * h / coord_scale
    xi, yi = int(np.floor(x)), int(np.floor(y))
    if not (0 <= xi < w and 0 <= yi < h):
        return False
    return bool(arr[yi, xi])


def _in_boxes(boxes: Any, p: Point) -> bool:
    for b in boxes:
        try:
            x1, y1, x2, y2 = (float(c) for c in b)
        except (TypeError, ValueError):
            continue
        if min(x1, x2) <= p.x <= max(x1, x2) and min(y1, y2) <= p.y <= max(y1, y2):
            return True
    return False


def spatial(completion: Any, points_masks: Any = None, coord_scale: float | None = None) -> Score:
    """Fraction of cited points inside the mask of their label (see the module docstring)."""
    points = extract_points(completion)
    if not points:
        return Score("spatial", None, "no points cited")
    if points_masks is None:
        return Score("spatial", None, "no masks in the sample")
    if callable(points_masks) and not isinstance(points_masks, Mapping):

        def lookup(label: str) -> Any:
            try:
                return points_masks(label)
            except Exception:
                return None
    elif isinstance(points_masks, Mapping):
        table = {_norm(k): v for k, v in points_masks.items()}

        def lookup(label: str) -> Any:
            return table.get(_norm(label))
    else:
        return Score(
            "spatial", None, f"points_masks must be a mapping or provider, got {type(points_masks).__name__}"
        )
    hits, unknown = 0, []
    for p in points:
        region = lookup(p.label)
        if region is None:
            unknown.append(p.label)
            continue
        try:
            hits += _hit(region, p, coord_scale)
        except (TypeError, ValueError):
            unknown.append(p.label)
    reason = f"{hits}/{len(points)} points inside their masks"
    if unknown:
        reason += "; no usable mask for " + ", ".join(sorted(set(map(repr, unknown))))
    return Score("spatial", hits / len(points), reason)
