"""How a pairwise judge's text becomes a verdict: ``strict`` (ours) and ``released`` (the
rules of the Proxy-GRM evaluation scripts, one per benchmark).

``strict`` — :func:`groundrl.parse.scores.parse_pairwise_verdict`: the first
``<answer>…</answer>`` (the whole text when there is no such pair) must contain exactly
one of the characters ``1`` and ``2``; anything else is *no verdict*, and the pair
counts as wrong.

``released`` — what Qwen-Applications/Proxy-GRM ``eval/*_reward_bench.py`` do (read at
commit HEAD of that repository; none of its code is copied). Each script first reads
the ``<answer>`` tag, and when that fails **falls back to a "1"/"2" elsewhere in the
text**; none of them drops an item:

* ``vl-rewardbench`` (``vl_reward_bench.py``): the tag's content (stripped) decides when
  it contains ``1`` but not ``2`` or ``2`` but not ``1``; otherwise the **last** ``1`` or
  ``2`` anywhere in the text; with none at all there is no verdict, and the pair counts
  as wrong (the script writes rewards ``[0, 0]``, which is wrong in both orders).
* ``multimodal-rewardbench`` (``multimodal_reward_bench.py``): the tag decides only when
  its stripped content is exactly ``1`` or ``2``; otherwise the **last** ``1``/``2`` in the
  text; with none, the script writes rewards ``[0, 1]``, i.e. **a vote for the response
  shown second**.
* ``mm-rlhf-rewardbench`` (``mmrlhf_reward_bench.py``): the tag as for Multimodal
  RewardBench; otherwise its regex ``[12](?!.*[12])`` without DOTALL, which finds the
  **last "1"/"2" on the first line that has one** (not the last in the text); with none,
  a vote for the response shown second.
* plain JSONL (``jsonl``): the VL-RewardBench rule.

Examples (verdicts on the presented order):

>>> released_verdict("<answer>Response 1</answer>", "vl-rewardbench")
1
>>> released_verdict("<answer>Response 1</answer>", "multimodal-rewardbench")
1
>>> released_verdict("I prefer 2 over 1.\\nSo: 2", "mm-rlhf-rewardbench")
1
>>> released_verdict("I prefer 2 over 1.\\nSo: 2", "vl-rewardbench")
2
>>> released_verdict("no digit", "vl-rewardbench") is None, released_verdict("no digit", "multimodal-rewardbench")
(True, 2)
"""

from __future__ import annotations

from typing import Any

from groundrl.parse.scores import parse_pairwise_verdict

PROTOCOLS = ("strict", "released")


def _tag_content(text: str) -> str | None:
    """``re.search(r"<answer>(.*?)</answer>", text, re.DOTALL).group(1)``, the scripts'
    read, or ``None``: the first ``<answer>`` and the first ``</answer>`` after it. Where
    the first opener has no closer after it no later one has, so one scan decides (the
    regex re-scanned to the end from every unclosed ``<answer>``: quadratic, issue 41)."""
    i = text.find("<answer>")
    if i < 0:
        return None
    j = text.find("</answer>", i + 8)
    return None if j < 0 else text[i + 8 : j]


def _last_12(text: str) -> int | None:
    i = max(text.rfind("1"), text.rfind("2"))
    return None if i < 0 else int(text[i])


def _first_line_last_12(text: str) -> int | None:
    for line in text.split("\n"):  # '.' stops at \n only, as in the script's regex
        v = _last_12(line)
        if v is not None:
            return v
    return None


def released_verdict(text: Any, dataset: str = "jsonl") -> int | None:
    """The released Proxy-GRM script's verdict for ``dataset`` (see the module docstring)."""
    if not isinstance(text, str):
        text = ""
    tag = _tag_content(text)
    inner = tag.strip() if tag is not None else None
    if dataset in ("multimodal-rewardbench", "mm-rlhf-rewardbench"):
        if inner in ("1", "2"):
            return int(inner)
        v = _first_line_last_12(text) if dataset == "mm-rlhf-rewardbench" else _last_12(text)
        return 2 if v is None else v  # the scripts' rewards [0, 1]: the second shown wins
    if inner is not None and (("1" in inner) != ("2" in inner)):
        return 1 if "1" in inner else 2
    return _last_12(text)


def strict_verdict(text: Any) -> int | None:
    """Our rule: exactly one of '1'/'2' in the first ``<answer>`` (see the module docstring)."""
    return parse_pairwise_verdict(text).value if isinstance(text, str) else None


def verdict(text: Any, protocol: str, dataset: str = "jsonl") -> int | None:
    if protocol == "strict":
        return strict_verdict(text)
    if protocol == "released":
        return released_verdict(text, dataset)
    raise ValueError(f"parse protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
