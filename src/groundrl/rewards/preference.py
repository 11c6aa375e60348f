"""Proxy-GRM: rewards for a pairwise generative reward model writing
``<rubric>…</rubric><eval>…</eval><answer>1|2</answer>``."""

from __future__ import annotations

from typing import Any

from groundrl.parse.scores import parse_pairwise_verdict
from groundrl.types import Score

_LAYOUTS = (("rubric", "eval", "answer"), ("think", "summary", "answer"))


def _full_match(s: str, tags: tuple[str, str, str]) -> bool:
    """``re.fullmatch("<a>.*?</a><b>.*?</b><c>.*?</c>", s)`` without backtracking: the
    earliest separators leave the most room, so a left-to-right ``find`` decides it."""
    a, b, c = tags
    start, end = f"<{a}>", f"</{c}>"
    if not (s.startswith(start) and s.endswith(end)):
        return False
    i = s.find(f"</{a}><{b}>", len(start))
    if i < 0:
        return False
    j = s.find(f"</{b}><{c}>", i + len(f"</{a}><{b}>"))
    if j < 0:
        return False
    return j + len(f"</{b}><{c}>") <= len(s) - len(end)


def proxy_format(completion: Any) -> Score:
    """Proxy-GRM format reward (0/1): after removing newlines the text fully matches
    ``<rubric>.*?</rubric><eval>.*?</eval><answer>.*?</answer>`` (or
    ``<think>…</think><summary>…</summary><answer>…</answer>``) with exactly one
    opening tag of each. Tags are matched case-sensitively, as in the paper's regex."""
    if not isinstance(completion, str):
        return Score("format", 0.0, f"completion is {type(completion).__name__}, not text")
    s = completion.replace("\n", "")
    for tags in _LAYOUTS:
        if all(s.count(f"<{t}>") == 1 for t in tags) and _full_match(s, tags):
            return Score("format", 1.0)
    return Score("format", 0.0, "not exactly <rubric>…</rubric><eval>…</eval><answer>…</answer>")


def proxy_accuracy(completion: Any, preferred: Any) -> Score:
    """±1 verdict accuracy: +1 when exactly one of '1'/'2' occurs in the alphanumerics of
    the first ``<answer>`` (whole text if none) and it is ``preferred``; else −1.
    ``preferred`` must be 1 or 2 (int or string): anything else is a data error and the
    part does not apply (``None`` with the reason)."""
    try:
        pref = int(str(preferred).strip())
    except ValueError:
        pref = 0
    if pref not in (1, 2) or isinstance(preferred, bool):
        return Score("accuracy", None, f"preferred must be 1 or 2, got {preferred!r}")
    v = parse_pairwise_verdict(completion)
    if not v.ok:
        return Score("accuracy", -1.0, v.error)
    if v.value != pref:
        return Score("accuracy", -1.0, f"picked {v.value}, preferred {pref}")
    return Score("accuracy", 1.0)


def rubric_text(completion: Any) -> str:
    """What the proxy agent is shown: the text up to and including the first
    ``</rubric>`` (the whole output when there is none)."""
    if not isinstance(completion, str):
        return ""
    i = completion.find("</rubric>")
    return completion if i < 0 else completion[: i + len("</rubric>")]
