"""Judge health on a fixed probe set, re-scored by the live judge every N steps.

A probe item is one sample as the reward sees it (``completion`` plus the fields the
reward reads: ``frames``, ``image``, ``question`` …) and optionally ``gt_score``, a
held-out label. One run scores every item as it is and under each EQA-RM perturbation
that changes it [EQA-RM §3.3: temporal (shuffled frames), spatial (masked patches),
reasoning (jumbled steps)], and reports:

* ``drop`` / ``drop/<kind>``: mean score(original) − score(perturbed). A judge that looks
  at the evidence scores the perturbed sample lower; a drop that vanishes means it stopped;
* ``agreement``: Spearman correlation of the scores with ``gt_score`` (scale-free, so any
  judge's scale works);
* ``swap_consistency`` (pairwise judges): items that carry ``pair_id`` and ``swapped``
  (the same pair with the two responses exchanged) and whose score is the verdict 1 or 2:
  the share of pairs whose two verdicts name the same underlying response (``v = 3 − v'``),
  as ``bench judge-reliability``'s swap agreement;
* ``failure_rate``: share of scorings that gave no number (``None``, NaN, an exception);
* ``latency_s``: wall seconds per item scored.

Cost: ``len(items) × (1 + perturbations that apply)`` judge calls per run.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from groundrl.io import JsonlError, iter_lines
from groundrl.monitor import signals as sg

#: Scores a batch of probe items (one score, or ``None``, per item).
ScoreFn = Callable[[Sequence[Mapping[str, Any]]], Sequence[Any]]


class ProbeExample(TypedDict):
    """A probe item the judge scored no lower after a perturbation."""

    kind: str
    score: float
    perturbed_score: float
    completion: str


def load_probe(path: str | Path) -> list[dict[str, object]]:
    """The probe set: one JSON object with a ``completion`` per line."""
    items = []
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"monitor.probe.path: no file at {str(p)!r}")
    for line in iter_lines(p):
        if line.problem or "completion" not in line.value:
            problem = line.problem or "no 'completion' field"
            fix = "write one JSON object with a 'completion' per line"
            raise ValueError(f"monitor.probe.path: {JsonlError(p, line.number, problem, fix)}")
        items.append(line.value)
    if not items:
        raise ValueError(f"monitor.probe.path: {p} holds no probe items")
    return items


def perturb(item: Mapping[str, Any], kind: str, rng: random.Random) -> dict[str, object] | None:
    """``item`` under one perturbation, or ``None`` when it does not apply (no frames, a
    single reasoning step …) so an unchanged copy never counts as a drop of 0."""
    # lazy: the perturbations bring numpy; only probes that perturb need them
    from groundrl.augment import mask_patches, shuffle_frames, shuffle_reasoning

    try:
        if kind == "frames":
            frames = item.get("frames")
            if not isinstance(frames, (list, tuple)) or len(frames) < 2:
                return None
            new, perm = shuffle_frames(list(frames), rng)
            return None if perm == sorted(perm) else {**item, "frames": new}
        if kind == "patches":
            if item.get("image") is not None and not isinstance(item["image"], str):
                return {**item, "image": mask_patches(item["image"], rng)[0]}
            frames = item.get("frames")
            if isinstance(frames, (list, tuple)) and frames and not any(isinstance(f, str) for f in frames):
                return {**item, "frames": [mask_patches(f, rng)[0] for f in frames]}
            return None
        if kind == "reasoning":
            text = str(item.get("completion") or "")
            new_text = shuffle_reasoning(text, rng)
            return None if new_text == text else {**item, "completion": new_text}
    except (ValueError, TypeError):  # an item the perturbation cannot read: not applicable
        return None
    raise ValueError(f"unknown perturbation {kind!r}")


def _score(score_fn: ScoreFn, items: Sequence[Mapping[str, object]]) -> tuple[list[float | None], float]:
    t0 = time.perf_counter()
    try:
        out = list(score_fn(items))
        if len(out) != len(items):
            out = [None] * len(items)
    except Exception:  # a judge that fails counts as failures, it must not stop training
        out = [None] * len(items)
    return [sg.num(v) for v in out], time.perf_counter() - t0


def run_probe(
    items: Sequence[Mapping[str, object]], score_fn: ScoreFn, perturbations: Sequence[str], seed: int = 0
) -> dict[str, object]:
    """Score the probe set and its perturbations once; see the module docstring. The
    result's values are numbers or ``None`` (``drop/<kind>`` per perturbation that
    applied), and ``examples``: :class:`ProbeExample` rows."""
    rng = random.Random(seed)
    base, seconds = _score(score_fn, items)
    scored, failed = len(items), sum(v is None for v in base)
    out: dict[str, object] = {"n": len(items), "score_mean": sg.mean(base)}
    drops: list[float] = []
    examples: list[ProbeExample] = []
    for kind in perturbations:
        variants = [(i, v) for i, it in enumerate(items) if (v := perturb(it, kind, rng)) is not None]
        if not variants:
            continue
        scores, sec = _score(score_fn, [v for _, v in variants])
        seconds += sec
        scored += len(variants)
        failed += sum(s is None for s in scores)
        pairs = [(v, base[i], s) for (i, v), s in zip(variants, scores, strict=True)]
        d = [b - s for _, b, s in pairs if b is not None and s is not None]
        if d:
            out[f"drop/{kind}"] = sum(d) / len(d)
            drops.extend(d)
        for v, b, s in pairs:  # the least sensitive items
            if len(examples) < 3 and b is not None and s is not None and s >= b:
                examples.append(
                    {
                        "kind": kind,
                        "score": b,
                        "perturbed_score": s,
                        "completion": str(v.get("completion"))[:300],
                    }
                )
    out["drop"] = sum(drops) / len(drops) if drops else None
    out["failure_rate"] = failed / scored if scored else None
    out["latency_s"] = seconds / scored if scored else None
    gts = [it.get("gt_score") for it in items]
    out["agreement"] = sg.spearman(base, gts) if any(sg.num(g) is not None for g in gts) else None
    out["swap_consistency"] = swap_consistency(items, base)
    out["examples"] = examples
    return out


def swap_consistency(items: Sequence[Mapping[str, object]], verdicts: Sequence[float | None]) -> float | None:
    """Share of swapped pairs whose verdicts (1 or 2) agree on the underlying response;
    ``None`` without a complete pair.

    >>> items = [{"pair_id": 1, "swapped": False}, {"pair_id": 1, "swapped": True},
    ...          {"pair_id": 2, "swapped": False}, {"pair_id": 2, "swapped": True}]
    >>> swap_consistency(items, [1, 2, 1, 1])  # pair 1 agrees, pair 2 picks slot 1 twice
    0.5
    """
    pairs: dict[object, dict[bool, float]] = {}
    for it, v in zip(items, verdicts, strict=False):
        pair, swapped = it.get("pair_id"), it.get("swapped")
        if pair is not None and v in (1.0, 2.0) and isinstance(swapped, bool):
            pairs.setdefault(pair, {})[swapped] = v
    done = [p for p in pairs.values() if len(p) == 2]
    if not done:
        return None
    return sum(p[False] == 3 - p[True] for p in done) / len(done)
