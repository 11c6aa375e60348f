"""Benchmark metrics: pure functions of result rows (dicts), shared by the drivers.

Rows are typed by the records they are (:mod:`groundrl.benchmarks.records`), or read as
``Mapping`` where a helper takes the column to read; each metric block this module
returns is a TypedDict declared beside its function.

Each is unit-tested on hand-made rows (tests/benchmarks/test_stats.py). The confidence
intervals live in :mod:`groundrl.intervals` (layer 0, used by the simulator too) and are
re-exported here; report formatting is :mod:`groundrl.benchmarks.report`.
``metrics.json`` keeps the raw values these return.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict, TypeVar

from groundrl.benchmarks.records import CI, Prediction, RateCell, ScoredRow, SwapRow, ValueCI
from groundrl.intervals import bootstrap_ci as bootstrap_ci  # re-exported
from groundrl.intervals import wilson_ci as wilson_ci

R = TypeVar("R", bound=Mapping[str, Any])
"""Any result row: the grouping helpers hand back the caller's own row type."""


def with_ci(items: Sequence[Any], metric: Callable[[Sequence[Any]], float | None], seed: int = 0) -> ValueCI:
    lo, hi = bootstrap_ci(items, metric, seed=seed)
    return {"value": metric(items), "ci95": [lo, hi]}


# -- metrics: pure functions on result rows (dicts), shared by the benchmark drivers -----


def split_by(rows: Sequence[R], field: str) -> dict[str, list[R]]:
    """Rows grouped by ``str(row[field])``, groups in sorted order; rows without the
    field (or with ``None``) are left out.

    >>> split_by([{"c": "b", "v": 1}, {"c": "a", "v": 2}, {"c": "b", "v": 3}, {"v": 4}], "c")
    {'a': [{'c': 'a', 'v': 2}], 'b': [{'c': 'b', 'v': 1}, {'c': 'b', 'v': 3}]}
    """
    groups: dict[str, list[R]] = {}
    for r in rows:
        if r.get(field) is not None:
            groups.setdefault(str(r[field]), []).append(r)
    return dict(sorted(groups.items()))


def share(rows: Sequence[Mapping[str, object]], key: str = "correct") -> float:
    """The share of rows whose ``key`` is true (rows must not be empty)."""
    return sum(bool(r[key]) for r in rows) / len(rows)


def macro_share(rows: Sequence[Mapping[str, object]], key: str = "correct", by: str = "category") -> float:
    """The mean over ``by`` groups of each group's :func:`share` (each group weighs the
    same); rows without ``by`` form one group ``"all"``."""
    groups: dict[str, list[Mapping[str, object]]] = {}
    for r in rows:
        groups.setdefault(str(r.get(by, "all")), []).append(r)
    return sum(share(g, key) for g in groups.values()) / len(groups)


def group_outcomes(rows: Sequence[Mapping[str, Any]], key: str = "correct") -> dict[str, list[bool]]:
    """``{group: [row[key], …]}`` over the rows that carry a ``group``."""
    groups: dict[str, list[bool]] = {}
    for r in rows:
        if r.get("group") is not None:
            groups.setdefault(str(r["group"]), []).append(r[key])
    return groups


def all_right_share(groups: dict[str, list[bool]]) -> float | None:
    """Acc+: the share of groups whose every outcome is true (``None`` without groups)."""
    return sum(all(v) for v in groups.values()) / len(groups) if groups else None


def all_right_chance(groups: dict[str, list[bool]]) -> float:
    """Acc+ of a coin-flip judge: the mean over groups of 0.5^(pairs in the group)."""
    return sum(0.5 ** len(v) for v in groups.values()) / len(groups)


def rate_cell(hits: int, n: int) -> RateCell:
    """``{"n", "hits", "accuracy", "accuracy_ci95"}`` of ``hits`` out of ``n`` (Wilson CI)."""
    return {"n": n, "hits": hits, "accuracy": hits / n, "accuracy_ci95": list(wilson_ci(hits, n))}


def within(pred: float | None, gold: float, tol: float = 2) -> bool:
    """A predicted score counts as right when it is within ``tol`` of gold; no prediction
    is wrong."""
    return pred is not None and abs(pred - gold) <= tol


def score_accuracy(rows: Sequence[Prediction]) -> float:
    """Share of rows whose ``pred`` is :func:`within` 2 of ``gt_score``."""
    return sum(1 for r in rows if within(r["pred"], r["gt_score"])) / len(rows)


def rmse(rows: Sequence[Prediction]) -> float | None:
    """Root mean squared error of ``pred`` against ``gt_score`` over the rows that have
    a ``pred`` (``None`` when none has)."""
    errors = [r["pred"] - r["gt_score"] for r in rows if r["pred"] is not None]
    return math.sqrt(sum(e**2 for e in errors) / len(errors)) if errors else None


def chance_accuracy(gold: float) -> float:
    """P(|s − gold| ≤ 2) for s uniform on the integers 0..10.

    >>> round(chance_accuracy(7), 4), round(chance_accuracy(9), 4), round(chance_accuracy(0), 4)
    (0.4545, 0.3636, 0.2727)
    """
    return sum(1 for s in range(11) if abs(s - gold) <= 2 + 1e-9) / 11


def mean_chance_accuracy(rows: Sequence[Prediction]) -> float:
    """:func:`chance_accuracy` averaged over the rows' ``gt_score`` (rows must not be empty)."""
    return sum(chance_accuracy(r["gt_score"]) for r in rows) / len(rows)


def error_kinds(bad: Sequence[Mapping[str, object]]) -> list[tuple[str, int]]:
    """Bad-item errors counted by kind (the message up to its first quoted value or
    parenthesis), sorted by kind."""
    counts: dict[str, int] = {}
    for b in bad:
        kind = str(b.get("error", "")).split(" '")[0].split(" (")[0]
        counts[kind] = counts.get(kind, 0) + 1
    return sorted(counts.items())


def column_means(
    rows: Sequence[Mapping[str, Any]], cols: Sequence[str], prefix: str = ""
) -> dict[str, ValueCI]:
    """``{col: {"value": mean of row[prefix + col], "ci95": bootstrap CI}}``; a mean over
    no rows is ``None``."""

    def mean_of(key: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
        return lambda rs: sum(r[key] for r in rs) / len(rs) if rs else None

    return {col: with_ci(rows, mean_of(prefix + col)) for col in cols}


# -- pairwise judges (pairwise-rm) ------------------------------------------------------


class AccuracyBlock(TypedDict):
    """Accuracy and macro accuracy (bootstrap CIs) and Acc+ (Wilson CI and chance level
    only when the rows carry groups)."""

    accuracy: float
    accuracy_ci95: CI
    macro_accuracy: float
    macro_accuracy_ci95: CI
    acc_plus: float | None
    n_groups: int
    acc_plus_ci95: NotRequired[CI]
    chance_acc_plus: NotRequired[float]


def accuracy_block(results: Sequence[Mapping[str, Any]], key: str, seed: int) -> AccuracyBlock:
    """Accuracy, macro accuracy and Acc+ of ``results`` judged by the ``key`` column."""
    groups = group_outcomes(results, key)
    block: AccuracyBlock = {
        "accuracy": share(results, key),
        "accuracy_ci95": with_ci(results, lambda rs: share(rs, key), seed)["ci95"],
        "macro_accuracy": macro_share(results, key),
        "macro_accuracy_ci95": with_ci(results, lambda rs: macro_share(rs, key), seed)["ci95"],
        "acc_plus": all_right_share(groups),
        "n_groups": len(groups),
    }
    if groups:
        block["acc_plus_ci95"] = list(wilson_ci(sum(all(v) for v in groups.values()), len(groups)))
        block["chance_acc_plus"] = all_right_chance(groups)
    return block


class ProtocolBlock(AccuracyBlock):
    """:class:`AccuracyBlock` under a second parse protocol, with how often it differs."""

    unparseable: int
    n_differ: int
    n_correct_differ: int


def protocol_block(results: Sequence[Mapping[str, object]], p: str, seed: int) -> ProtocolBlock:
    """The accuracy block under a second parse protocol ``p``, and how often its
    verdicts (and their correctness) differ from the headline protocol's."""
    return {
        **accuracy_block(results, f"correct_{p}", seed),
        "unparseable": sum(r[f"verdict_{p}"] is None for r in results),
        "n_differ": sum(r[f"verdict_{p}"] != r["verdict"] for r in results),
        "n_correct_differ": sum(r[f"correct_{p}"] != r["correct"] for r in results),
    }


class ProxyAgreement(TypedDict):
    """Proxy-verified inference: how often the proxy agrees with the policy, accuracy
    when both agree, the proxy's own accuracy (Wilson CIs)."""

    n: int
    n_agree: int
    agree_rate: float
    agree_rate_ci95: CI
    accuracy_when_agree: float | None
    proxy_accuracy: float
    proxy_accuracy_ci95: CI


def proxy_agreement(results: Sequence[Mapping[str, object]]) -> ProxyAgreement:
    """Agreement of the proxy agent with the policy, accuracy when both agree, and the
    proxy's own accuracy."""
    n = len(results)
    agree = [r for r in results if r["proxy_agree"]]
    proxy_hits = sum(r["proxy_verdict"] == r["preferred"] for r in results)
    return {
        "n": n,
        "n_agree": len(agree),
        "agree_rate": len(agree) / n,
        "agree_rate_ci95": list(wilson_ci(len(agree), n)),
        "accuracy_when_agree": share(agree) if agree else None,
        "proxy_accuracy": proxy_hits / n,
        "proxy_accuracy_ci95": list(wilson_ci(proxy_hits, n)),
    }


class CategoryCell(RateCell, total=False):
    """A category's :class:`RateCell` and its accuracy under the parse protocol reported
    beside the headline one (:data:`~groundrl.benchmarks.protocols.PROTOCOLS`)."""

    accuracy_strict: float
    accuracy_released: float


def _category_cell(rows: Sequence[Mapping[str, Any]], others: Sequence[str]) -> CategoryCell:
    cell: CategoryCell = {**rate_cell(sum(r["correct"] for r in rows), len(rows))}
    for p in others:
        if p == "strict":
            cell["accuracy_strict"] = share(rows, "correct_strict")
        elif p == "released":
            cell["accuracy_released"] = share(rows, "correct_released")
        else:
            raise ValueError(f"no per-category column for parse protocol {p!r}")
    return cell


def accuracy_by_category(
    results: Sequence[Mapping[str, Any]], others: Sequence[str]
) -> dict[str, CategoryCell]:
    """Per category: n, hits, accuracy (Wilson CI) and the accuracy under each other
    parse protocol (``strict`` or ``released``)."""
    return {c: _category_cell(rs, others) for c, rs in split_by(results, "category").items()}


class SourceCell(TypedDict):
    n: int
    accuracy: float
    accuracy_ci95: CI


def accuracy_by_source(results: Sequence[Mapping[str, Any]]) -> dict[str, SourceCell]:
    """Per ``source`` (VL-RewardBench's query_source): n, accuracy (Wilson CI)."""
    out: dict[str, SourceCell] = {}
    for c, rs in split_by(results, "source").items():
        cell = rate_cell(sum(r["correct"] for r in rs), len(rs))
        out[c] = {"n": cell["n"], "accuracy": cell["accuracy"], "accuracy_ci95": cell["accuracy_ci95"]}
    return out


# -- judge reliability (judge-reliability) ----------------------------------------------


def mean_or_none(xs: Sequence[float]) -> float | None:
    """The mean, ``None`` for no values."""
    return sum(xs) / len(xs) if xs else None


def mode_share(vs: list[Any]) -> tuple[float, bool]:
    """``(share of the values equal to the most frequent one, whether all are equal)``;
    ``None`` counts as a value of its own; ``(0.0, False)`` for no values."""
    if not vs:
        return 0.0, False
    top = Counter(vs).most_common(1)[0][1]
    return top / len(vs), top == len(vs)


def position_counts(results: Sequence[SwapRow]) -> dict[str, int]:
    """Counts behind the position metrics: parseable verdicts and how many pick the first
    slot, pairs parseable in both orders and how many agree, pairs right in both orders."""
    slots = [v for r in results for v in (r["slot_original"], r["slot_swapped"]) if v is not None]
    agreed = [r["agree"] for r in results if r["agree"] is not None]
    return {
        "verdicts": len(slots),
        "first": sum(v == 1 for v in slots),
        "both_parsed": len(agreed),
        "agree": sum(agreed),
        "right_both": sum(r["right_original"] and r["right_swapped"] for r in results),
    }


class PositionMetrics(TypedDict):
    """judge-reliability's order effects: first-slot rate, swap agreement, accuracy in
    both orders and per order (Wilson CIs)."""

    first_slot_rate: float | None
    first_slot_rate_ci95: CI
    n_verdicts: int
    swap_agreement: float | None
    swap_agreement_ci95: CI
    n_pairs_both_parsed: int
    accuracy_both_orders: float
    accuracy_both_orders_ci95: CI
    accuracy_original_order: float
    accuracy_swapped_order: float


def position_metrics(results: Sequence[SwapRow]) -> PositionMetrics:
    """First-slot rate, swap agreement and accuracy in both orders (Wilson CIs)."""
    c, n = position_counts(results), len(results)
    return {
        "first_slot_rate": c["first"] / c["verdicts"] if c["verdicts"] else None,
        "first_slot_rate_ci95": list(wilson_ci(c["first"], c["verdicts"])),
        "n_verdicts": c["verdicts"],
        "swap_agreement": c["agree"] / c["both_parsed"] if c["both_parsed"] else None,
        "swap_agreement_ci95": list(wilson_ci(c["agree"], c["both_parsed"])),
        "n_pairs_both_parsed": c["both_parsed"],
        "accuracy_both_orders": c["right_both"] / n,
        "accuracy_both_orders_ci95": list(wilson_ci(c["right_both"], n)),
        "accuracy_original_order": sum(r["right_original"] for r in results) / n,
        "accuracy_swapped_order": sum(r["right_swapped"] for r in results) / n,
    }


class SelfConsistency(TypedDict):
    """Agreement of K samples per presentation with their mode, and how often all agree."""

    self_consistency: float | None
    self_consistency_ci95: CI
    unanimous_rate: float | None
    unanimous_rate_ci95: CI
    n_presentations: int
    # the plot's count; judge-reliability takes it out before metrics.json
    n_unanimous: NotRequired[int]


def self_consistency(results: Sequence[SwapRow], seed: int) -> SelfConsistency:
    """Per presentation with samples, the share of K samples agreeing with their mode
    (mean, bootstrap CI) and the share of presentations where all K agree (Wilson CI)."""
    pres = [
        mode_share(s)
        for r in results
        for s in (r["samples_original"], r["samples_swapped"])
        if s  # a failed call has no samples
    ]
    shares = [a for a, _ in pres]
    unanimous = sum(u for _, u in pres)
    return {
        "self_consistency": mean_or_none(shares),
        "self_consistency_ci95": list(bootstrap_ci(shares, mean_or_none, seed=seed)),
        "unanimous_rate": unanimous / len(pres) if pres else None,
        "unanimous_rate_ci95": list(wilson_ci(unanimous, len(pres))),
        "n_presentations": len(pres),
        "n_unanimous": unanimous,
    }


CALIBRATION_BINS = ((0, 2), (3, 4), (5, 6), (7, 8), (9, 10))


def score_bin(score: float) -> tuple[int, int]:
    s = math.floor(score + 0.5)
    return (
        next(b for b in CALIBRATION_BINS if b[0] <= s <= b[1])
        if 0 <= s <= 10
        else (CALIBRATION_BINS[0] if s < 0 else CALIBRATION_BINS[-1])
    )


class CalibrationBin(TypedDict):
    """One predicted-score bin of the calibration table."""

    bin: str
    n: int
    mean_pred: float | None
    mean_gold: float | None
    mean_gold_ci95: CI
    within_2: float | None
    within_2_ci95: CI


def calibration(results: Sequence[Prediction], seed: int) -> list[CalibrationBin]:
    """Per predicted-score bin: n, mean predicted, mean gold (bootstrap CI) and the share
    within 2 of gold (Wilson CI), over the rows with a ``pred``."""
    have = [(r["pred"], r["gt_score"]) for r in results if r["pred"] is not None]
    calib: list[CalibrationBin] = []
    for lo, hi in CALIBRATION_BINS:
        rs = [(pred, gold) for pred, gold in have if score_bin(pred) == (lo, hi)]
        hits = sum(abs(pred - gold) <= 2 for pred, gold in rs)
        golds = [gold for _, gold in rs]
        calib.append(
            {
                "bin": f"{lo}-{hi}",
                "n": len(rs),
                "mean_pred": mean_or_none([pred for pred, _ in rs]),
                "mean_gold": mean_or_none(golds),
                "mean_gold_ci95": list(bootstrap_ci(golds, mean_or_none, seed=seed)),
                "within_2": hits / len(rs) if rs else None,
                "within_2_ci95": list(wilson_ci(hits, len(rs))),
            }
        )
    return calib


class ScoreSpread(TypedDict):
    """Spread of K sampled scores per item: mean SD and how often all K are identical."""

    score_sd: float | None
    score_sd_ci95: CI
    identical_rate: float | None
    identical_rate_ci95: CI
    n_self_consistency: int


def score_spread(results: Sequence[ScoredRow], seed: int) -> ScoreSpread:
    """Over items with at least two parseable samples: the mean per-item sample SD
    (bootstrap CI) and the share of items whose K scores are identical (Wilson CI)."""
    multi = [r["samples"] for r in results if sum(s is not None for s in r["samples"]) >= 2]
    sds = []
    same = 0
    for s in multi:
        v = [x for x in s if x is not None]
        m = sum(v) / len(v)
        sds.append(math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)))
        same += len(set(s)) == 1
    return {
        "score_sd": mean_or_none(sds),
        "score_sd_ci95": list(bootstrap_ci(sds, mean_or_none, seed=seed)),
        "identical_rate": same / len(multi) if multi else None,
        "identical_rate_ci95": list(wilson_ci(same, len(multi))),
        "n_self_consistency": len(multi),
    }


# -- score judges (score-rm) ------------------------------------------------------------


class ScoreGroup(RateCell):
    """A group's :class:`RateCell` of |Δ| ≤ 2 hits, its RMSE and its chance accuracy."""

    rmse: float | None
    chance_accuracy: float


def score_group(rows: Sequence[Prediction]) -> ScoreGroup:
    """n, hits, accuracy (Wilson CI), RMSE and chance accuracy of one group of rows."""
    hits = sum(within(r["pred"], r["gt_score"]) for r in rows)
    return {**rate_cell(hits, len(rows)), "rmse": rmse(rows), "chance_accuracy": mean_chance_accuracy(rows)}


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); ``None`` when either side
    is constant or there are fewer than 2 pairs.

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    >>> round(spearman([1, 2, 2, 3], [1, 3, 2, 4]), 4)
    0.9487
    """
    if len(xs) < 2:
        return None

    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for t in range(i, j + 1):
                r[order[t]] = (i + j) / 2 + 1
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return None if vx == 0 or vy == 0 else cov / math.sqrt(vx * vy)
