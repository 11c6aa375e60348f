"""The monitor's signals as pure functions over per-sample rows and logged metrics.

A sample row is a dict with ``completion`` (text), ``reward`` (the judge / learned reward
that trains the policy), optionally ``truth`` (a rule reward or the simulator on the same
sample), ``format``, ``accuracy`` and ``group`` (GRPO group id). Every function is total:
missing or non-finite values are skipped, and a signal with too little data is ``None``.
All run in time linear in the total text (Spearman: n log n in the samples).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_TOKEN = re.compile(r"</?[A-Za-z_][\w-]{0,40}>|[A-Za-z_][A-Za-z0-9_]{1,40}")


def num(v: Any) -> float | None:
    """A finite float, else ``None`` (bools and strings are not numbers here)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def mean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def ranks(xs: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their average rank.

    >>> ranks([10.0, 20.0, 10.0])
    [1.5, 3.0, 1.5]
    """
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: Sequence[Any], ys: Sequence[Any]) -> float | None:
    """Spearman rank correlation over the pairs where both are numbers; ``None`` with
    fewer than 3 pairs or a constant side (no ranking to compare).

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40])
    1.0
    """
    pairs = [(a, b) for a, b in zip(xs, ys, strict=False) if num(a) is not None and num(b) is not None]
    if len(pairs) < 3:
        return None
    rx, ry = ranks([p[0] for p in pairs]), ranks([p[1] for p in pairs])
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def hack_share(rows: Sequence[Mapping[str, Any]], high_reward: float, truth_pass: float) -> float | None:
    """Share of samples (with both values) whose judge reward is high (``>= high_reward``)
    while ground truth failed (``< truth_pass``)."""
    pairs = [(num(r.get("reward")), num(r.get("truth"))) for r in rows]
    both = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not both:
        return None
    return sum(a >= high_reward and b < truth_pass for a, b in both) / len(both)


def words(text: Any) -> list[str]:
    return str(text or "").split()


def length(text: Any) -> int:
    """Completion length in whitespace words (a tokenizer-free proxy that any log has)."""
    return len(words(text))


def repetition(text: Any) -> float:
    """Share of word trigrams that repeat an earlier trigram of the same text (0 for
    fewer than 4 words).

    >>> repetition("a b c a b c")
    0.25
    """
    w = words(text)
    grams = [tuple(w[i : i + 3]) for i in range(len(w) - 2)]
    if len(grams) < 2:
        return 0.0
    return (len(grams) - len(set(grams))) / len(grams)


def zero_std_groups(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """Share of GRPO groups (rows sharing ``group``, two or more rewards) whose rewards are
    all equal: no advantage, so no learning signal, in those groups."""
    groups: dict[Any, list[float]] = {}
    for r in rows:
        v = num(r.get("reward"))
        if r.get("group") is not None and v is not None:
            groups.setdefault(r["group"], []).append(v)
    sized = [g for g in groups.values() if len(g) >= 2]
    if not sized:
        return None
    return sum(max(g) - min(g) <= 1e-9 for g in sized) / len(sized)


def tokens(text: Any) -> set[str]:
    """Distinct lower-cased words and tags (``<rubric>``, ``</answer>``) of a text."""
    return {m.group(0).lower() for m in _TOKEN.finditer(str(text or ""))}


def document_frequency(texts: Iterable[Any]) -> tuple[Counter[str], int]:
    df: Counter[str] = Counter()
    n = 0
    for t in texts:
        df.update(tokens(t))
        n += 1
    return df, n


def shortcut_token(
    rows: Sequence[Mapping[str, Any]],
    reference: tuple[Counter[str], int],
    high_reward: float,
    max_reference_share: float = 0.01,
    min_high: int = 8,
) -> tuple[str | None, float | None]:
    """The token most over-represented in high-reward samples against the reference texts
    (the data): ``(token, share in high-reward samples - share in the reference)`` over
    tokens that at most ``max_reference_share`` of the reference texts contain. ``(None,
    None)`` with fewer than ``min_high`` high-reward samples (one odd sample is not a
    pattern) or no reference texts."""
    ref_df, ref_n = reference
    high = [r for r in rows if (v := num(r.get("reward"))) is not None and v >= high_reward]
    if len(high) < max(1, min_high) or ref_n == 0:
        return None, None
    df, n = document_frequency(r.get("completion") for r in high)
    best, gap = None, 0.0
    for tok, c in sorted(df.items()):
        ref_share = ref_df.get(tok, 0) / ref_n
        if ref_share > max_reference_share:
            continue
        g = c / n - ref_share
        if g > gap:
            best, gap = tok, g
    return best, gap


def slope_gap(
    format_now: float | None, format_base: float | None, acc_now: float | None, acc_base: float | None
) -> float | None:
    """How much more the format reward rose than accuracy did since the baseline.

    >>> slope_gap(0.9, 0.5, 0.6, 0.6)
    0.4
    """
    if format_now is None or format_base is None or acc_now is None or acc_base is None:
        return None
    return round((format_now - format_base) - (acc_now - acc_base), 12)


def kl_jump(kl_history: Sequence[Any], kl_now: Any, floor: float = 1e-3) -> float | None:
    """``kl_now`` over the median of the earlier KL values (each at least ``floor``, so a
    KL near 0 at the start does not make every later value a jump)."""
    now = num(kl_now)
    past = sorted(v for v in (num(x) for x in kl_history) if v is not None)
    if now is None or not past:
        return None
    mid = past[len(past) // 2] if len(past) % 2 else (past[len(past) // 2 - 1] + past[len(past) // 2]) / 2
    return now / max(mid, floor)
