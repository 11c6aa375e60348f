"""Proxy-GRM: rule rewards for a pairwise generative reward model writing
``<rubric>…</rubric><eval>…</eval><answer>1|2</answer>``.

The paper's policy reward is ``accuracy (±1) + proxy (±1) + 0.5 · format (0/1)``; the
proxy part is a judge call (:class:`groundrl.judges.papers.ProxyAgent`) given
:func:`rubric_text`, and the weighted sum lives in :mod:`groundrl.recipes.proxy_grm`.
"""

from __future__ import annotations

from typing import Any

from groundrl.parse.scores import parse_pairwise_verdict, parse_preferred
from groundrl.types import Score

_LAYOUTS = (("rubric", "eval", "answer"), ("think", "summary", "answer"))
# What each layout counts: the released verify_format counts the prefix "<rubric" (so
# <rubric_item>, <rubrics>, <rubric id=…> count too) but whole "<eval>", "<answer>", "<think>"
# and "<summary>" tags; the paper only says "matches the format" [Proxy-GRM Eq. 6].
_LAYOUT_OPENS = (
    (_LAYOUTS[0], ("<rubric", "<eval>", "<answer>")),
    (_LAYOUTS[1], ("<think>", "<summary>", "<answer>")),
)


def _full_match(s: str, tags: tuple[str, str, str]) -> bool:
    """``re.fullmatch("<a>.*?</a><b>.*?</b><c>.*?</c>", s)`` without backtracking: the
    earliest separators leave the most room, so a left-to-right ``find`` decides it."""
    pieces = _PIECES.get(tags)
    if pieces is None:
        a, b, c = tags
        pieces = _PIECES[tags] = (f"<{a}>", f"</{c}>", f"</{a}><{b}>", f"</{b}><{c}>")
    start, end, ab, bc = pieces
    if not (s.startswith(start) and s.endswith(end)):
        return False
    i = s.find(ab, len(start))
    if i < 0:
        return False
    j = s.find(bc, i + len(ab))
    if j < 0:
        return False
    return j + len(bc) <= len(s) - len(end)


_PIECES: dict[tuple[str, str, str], tuple[str, str, str, str]] = {}


def proxy_format(completion: Any) -> Score:
    """Proxy-GRM format reward (0/1), the released code's check (the paper says only
    "matches the format" [Proxy-GRM Eq. 6])::

        s = completion.replace("\n", "")
        1 if re.fullmatch(r"<rubric>.*?</rubric><eval>.*?</eval><answer>.*?</answer>", s)
             and s.count("<rubric") == s.count("<eval>") == s.count("<answer>") == 1
        else 0

    or the same with ``<think>…</think><summary>…</summary><answer>…</answer>``. So the text
    must start with the first opening tag and end with ``</answer>``, nothing (not even a
    space) may sit between a closing tag and the next opening tag, and line breaks are
    ignored. Tags are case-sensitive, as in the paper's regex. As in the released
    ``verify_format``, the rubric count is of the prefix ``<rubric``: a ``<rubric_item>``,
    ``<rubrics>`` or ``<rubric id=…>`` anywhere is a second rubric tag and the format is 0
    (the ``<think>`` layout counts whole tags). Decided without a
    backtracking regex (:func:`_full_match`), linear on adversarial megabytes.
    """
    if not isinstance(completion, str):
        return Score("format", 0.0, f"completion is {type(completion).__name__}, not text")
    s = completion.replace("\n", "")
    for tags, opens in _LAYOUT_OPENS:
        # the structure first (two finds), the counts only when it holds: same verdict
        if _full_match(s, tags) and all(s.count(o) == 1 for o in opens):
            return Score("format", 1.0)
    repeated = [o for o in _LAYOUT_OPENS[0][1] if s.count(o) > 1]
    if repeated:
        tag = repeated[0] if repeated[0] != "<rubric" else "<rubric> (or another <rubric… tag)"
        return Score("format", 0.0, f"opening tag {tag} occurs more than once")
    return Score("format", 0.0, "not exactly <rubric>…</rubric><eval>…</eval><answer>…</answer>")


def proxy_accuracy(completion: Any, preferred: Any) -> Score:
    """Proxy-GRM verdict accuracy (±1).

    ``+1`` when exactly one of the characters '1'/'2' occurs in the alphanumerics of the
    first ``<answer>`` content (the whole text when there is no ``<answer>`` pair, as in
    the paper's code) and it is ``preferred``; ``−1`` otherwise, including both or neither
    digit (``"12"``, ``""``) and non-text completions. See
    :func:`groundrl.parse.scores.parse_pairwise_verdict`.

    ``preferred`` may be ``1``, ``2``, ``"1"``, ``"2"`` (or ``1.0``/``2.0``). Anything else
    is a *data* error, not the policy's: ``−1`` would punish the policy for it and ``0``
    would still pull the group's mean, so the part does not apply (``value=None``, TRL's
    "ignore this reward", with reason ``"preferred must be 1 or 2, got …"``).
    """
    pref = parse_preferred(preferred)
    if not pref.ok:
        return Score("accuracy", None, pref.error)
    v = parse_pairwise_verdict(completion)
    if not v.ok:
        return Score("accuracy", -1.0, v.error)
    if v.value != pref.value:
        return Score("accuracy", -1.0, f"picked {v.value}, preferred {pref.value}")
    return Score("accuracy", 1.0, f"picked {v.value}")


def rubric_text(completion: Any) -> str:
    """What the proxy agent is shown: the first ``<rubric>…</rubric>`` block, tags
    included, and nothing else; ``""`` when the completion has no such block.

    The proxy judges "using only the rubric" [Proxy-GRM §3.3, Eq. 7], so text before
    ``<rubric>`` and everything after ``</rubric>`` (the eval and the verdict) is never
    shown. A completion without a closed rubric gets no proxy call at all: its proxy
    reward is the paper's "otherwise" value, −1 (:data:`NO_RUBRIC_PROXY`).

    >>> rubric_text("ok <rubric>counts chairs</rubric><eval>…</eval><answer>1</answer>")
    '<rubric>counts chairs</rubric>'
    >>> rubric_text("<eval>r1 is better</eval><answer>1</answer>")
    ''
    """
    if not isinstance(completion, str):
        return ""
    start = completion.find("<rubric>")
    if start < 0:
        return ""
    end = completion.find("</rubric>", start + len("<rubric>"))
    return "" if end < 0 else completion[start : end + len("</rubric>")]


NO_RUBRIC_PROXY = -1.0
"""The proxy reward of a completion with no rubric block: the proxy cannot pick the
preferred response from a rubric it never got, Eq. 7's "otherwise" [Proxy-GRM §3.3]."""
