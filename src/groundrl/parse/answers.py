"""Final answers, multiple-choice letters and answer normalisation."""

from __future__ import annotations

import re
import string
from typing import Any

from groundrl.parse.result import Parsed, fail
from groundrl.parse.tags import find_tag

_BOX_RE = re.compile(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>", re.DOTALL)
_BOXED_RE = re.compile(r"\\boxed\{([^{}]*)\}")
_TAIL_RE = re.compile(r"(?:final answer|answer)\s*(?:is|:)\s*(.+)", re.IGNORECASE)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_MARKUP_RE = re.compile(r"[\s*_`()\[\].:]+")


def extract_answer(text: Any) -> Parsed:
    """The final answer of a completion, by the first rule that applies:

    1. the content of the **last** complete ``<answer>…</answer>`` pair (reasoning models
       sometimes restate; the last one is their final word);
    2. the last ``<|begin_of_box|>…<|end_of_box|>`` or ``\\boxed{…}``;
    3. the text after the last "answer:" / "answer is" / "final answer is" (to line end);
    4. the whole text, stripped.

    An empty result is a failure with a reason.
    """
    if not isinstance(text, str):
        return fail(f"completion is {type(text).__name__}, not text")
    inner = find_tag(text, "answer", which="last")
    if inner is None:
        boxes = _BOX_RE.findall(text) or _BOXED_RE.findall(text)
        if boxes:
            inner = boxes[-1].strip()
        else:
            tails = list(_TAIL_RE.finditer(text[-2000:]))  # answers sit at the end
            inner = tails[-1].group(1).splitlines()[0].strip() if tails else text.strip()
    else:
        boxes = _BOX_RE.findall(inner)
        if boxes:
            inner = boxes[-1].strip()
    if not inner:
        return fail("empty answer")
    return Parsed(inner)


def normalize_answer(s: Any) -> str:
    """SQuAD-style normalisation: lower-case, drop punctuation and the articles
    a / an / the, collapse whitespace."""
    if not isinstance(s, str):
        s = "" if s is None else str(s)
    s = s.lower().translate(_PUNCT)
    s = _ARTICLES_RE.sub(" ", s)
    return " ".join(s.split())


def extract_choice(text: Any, choices: str = "ABCDEFGHIJ") -> Parsed:
    """A multiple-choice letter from the final answer (see :func:`extract_answer`).

    Accepted: "B", "B.", "(B)", "**B**", "B) text", "B. text", "B: text",
    "Answer: B", "the answer is (B)", "option B", "<|begin_of_box|>B<|end_of_box|>",
    and a sentence holding exactly one distinct parenthesised letter ("I think (C).").
    Letters are upper-case and must be in ``choices``. A letter followed by a space and
    more words ("A cat sits") is **not** a choice: it reads as an article.
    """
    ans = extract_answer(text)
    if not ans.ok:
        return ans
    a = ans.value
    letters = re.escape(choices)
    bare = _MARKUP_RE.sub("", a)
    if len(bare) == 1 and bare in choices:
        return Parsed(bare)
    m = re.match(rf"\s*\**\(?([{letters}])(?:\)|\.|:|\*\*)", a)
    if m:
        return Parsed(m.group(1))
    m = re.search(
        rf"(?:answer|option|choice)\s*(?:is|:)?\s*\**\(?([{letters}])\)?(?![A-Za-z])", a, re.IGNORECASE
    )
    if m and m.group(1) in choices:
        return Parsed(m.group(1))
    wrapped = set(re.findall(rf"\(([{letters}])\)", a))
    if len(wrapped) == 1:
        return Parsed(wrapped.pop())
    return fail(f"no choice letter in answer {a[:40]!r}")
