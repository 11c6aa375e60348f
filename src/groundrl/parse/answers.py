"""Final answers, multiple-choice letters, answer normalisation and answer numbers.

Every function here is total: any input (non-text, empty, 1 MB of ``<``) gives a
:class:`~groundrl.parse.result.Parsed` (or a string), never an exception.
"""

from __future__ import annotations

import re
from typing import Any

from groundrl.parse.numbers import parse_exact_number, parse_number
from groundrl.parse.result import Parsed, fail
from groundrl.parse.tags import find_tag

_GLM_OPEN, _GLM_CLOSE = "<|begin_of_box|>", "<|end_of_box|>"
_BOXED = "\\boxed{"
# "answer:" / "answer is" / "final answer is" / "**Answer:**" (the cue word must be a word).
_CUE_RE = re.compile(r"\b(?:final\s+)?answer\b[\s*_]*(?:is\b|:)[ \t*_]*", re.IGNORECASE)
_LEADING_CUE_RE = re.compile(
    r"^[\s*_]*(?:the\s+)?(?:final\s+)?answer\b[\s*_]*(?:is\b|:)[\s*_]*", re.IGNORECASE
)
# The last "</think>" in one anchored match: the greedy (?s:.*) backs off from the end to
# the last closer, which is finditer's last match (closers cannot overlap), without a
# match object per closer (issue 41: listing 60k matches per MB of "<think>1</think>"
# grew faster than the text).
_LAST_THINK_CLOSE_RE = re.compile(r"(?s:.*)</\s*think\s*>", re.IGNORECASE)
# The last "<answer…>" opener, the same way: openers hold one '<' each, so they cannot
# overlap and the last start that matches is finditer's last match (issue 41: one match
# object per opener, 60 ms per MB of "<answer>").
_LAST_ANSWER_OPEN_RE = re.compile(r"(?s:.*)<\s*answer(?:\s[^<>]*)?>", re.IGNORECASE)
_EDGE_MARKUP = " \t\r\n*_`"
# The cue rule reads the text after the last cue; answers sit at the end of a completion.
_CUE_WINDOW = 4000


def _last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{…}`` with balanced braces (``\\boxed{\\frac{1}{2}}``).
    Only the last four openers are tried, each over at most 2000 characters, so
    ``\\boxed{`` spam stays cheap."""
    start = text.rfind(_BOXED)
    for _ in range(4):
        if start == -1:
            return None
        depth, i = 1, start + len(_BOXED)
        end = min(len(text), i + 2000)
        while i < end:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return text[start + len(_BOXED) : i]
            i += 1
        start = text.rfind(_BOXED, 0, start)
    return None


def _box(text: str) -> str | None:
    """The last GLM box (last ``<|end_of_box|>`` and the opener before it), else the
    last ``\\boxed{…}``. String search, not regex: linear on opener spam."""
    close = text.rfind(_GLM_CLOSE)
    if close != -1:
        open_ = text.rfind(_GLM_OPEN, 0, close)
        if open_ != -1:
            return text[open_ + len(_GLM_OPEN) : close]
    return _last_boxed(text)


def _after_last_cue(text: str) -> str | None:
    tail_start = max(0, len(text) - _CUE_WINDOW)
    last = None
    for m in _CUE_RE.finditer(text, tail_start):
        last = m
    if last is None:
        return None
    rest = text[last.end() :]
    for line in rest.splitlines():
        if line.strip(_EDGE_MARKUP):
            return line
    return ""


def after_last_think(text: str) -> str:
    """The text after the last ``</think>`` (any case, whitespace inside the tag), or the
    whole text when there is none. One anchored match: linear.

    >>> after_last_think("<think>a</think>b</ Think >c"), after_last_think("no tag")
    ('c', 'no tag')
    """
    if "</" not in text:  # no closer can start: skip the backward walk over the whole text
        return text
    m = _LAST_THINK_CLOSE_RE.match(text)
    return text[m.end() :] if m else text


def extract_answer(text: Any) -> Parsed:
    """The final answer of a completion, by the first rule that applies:

    1. the content of the **last** complete ``<answer>…</answer>`` pair (reasoning
       models sometimes restate; the last pair is their final word); with no complete
       pair, the text after the last unclosed ``<answer>`` (a truncated or unclosed
       answer); a box inside it (rule 2) narrows it further;
    2. the last ``<|begin_of_box|>…<|end_of_box|>`` (GLM-style), else the last
       ``\\boxed{…}`` (braces balanced);
    3. the rest of the line after the last "answer:" / "answer is" / "final answer
       is" cue (case-insensitive, ``**Answer:**`` too; the next non-empty line when
       the cue ends its line), looked for in the last 4000 characters;
    4. the whole text after the last ``</think>`` (or the whole text), stripped.

    Then a leading "Answer:" / "The answer is" is dropped and surrounding whitespace
    and markdown emphasis (``*``, ``_``, backticks) are stripped. An empty result is a
    failure with a reason.
    """
    if not isinstance(text, str):
        return fail(f"completion is {type(text).__name__}, not text")
    inner = find_tag(text, "answer", which="last")
    if inner is None:
        opened = _LAST_ANSWER_OPEN_RE.match(text)
        if opened is not None:
            inner = text[opened.end() :]
    if inner is not None:
        boxed = _box(inner)
        if boxed is not None:
            inner = boxed
    else:
        inner = _box(text)
        if inner is None:
            inner = _after_last_cue(text)
        if inner is None:
            inner = after_last_think(text)
    inner = _LEADING_CUE_RE.sub("", inner, count=1).strip(_EDGE_MARKUP)
    if not inner:
        return fail("empty answer")
    return Parsed(inner)


# --- tag blocks -------------------------------------------------------------

_BLOCK_TAGS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {}


def drop_tag_blocks(text: Any, tag: str) -> str:
    """``text`` without its ``<tag>…</tag>`` blocks (tag name in any case, each block
    ending at the first close after its open), stripped: what
    ``re.sub(r"(?is)<tag>.*?</tag>", "", text).strip()`` gives, in one pass over the text
    (that regex rescans to the end from every unclosed ``<tag>``: quadratic). After an
    open with no close, no later open has one either, so the search stops there.

    >>> drop_tag_blocks("<think>hmm</think> Yes <THINK>x</think>!", "think")
    'Yes !'
    >>> drop_tag_blocks("<answer>" * 3 + "left", "answer")
    '<answer><answer><answer>left'
    """
    if not isinstance(text, str):
        return ""
    pats = _BLOCK_TAGS.get(tag)
    if pats is None:
        t = re.escape(tag)
        pats = _BLOCK_TAGS.setdefault(tag, (re.compile(f"<{t}>", re.I), re.compile(f"</{t}>", re.I)))
    open_, close = pats
    out: list[str] = []
    pos = 0
    while (m := open_.search(text, pos)) and (c := close.search(text, m.end())):
        out.append(text[pos : m.start()])
        pos = c.end()
    if not out:
        return text.strip()
    out.append(text[pos:])
    return "".join(out).strip()


# --- normalisation ----------------------------------------------------------

_APOSTROPHES = "'’‘`"
# a separator between digits; the lookbehind after the separator lets the engine scan for
# the separator itself (a leading lookbehind was tried at every position, issue 41)
_DECIMAL_POINT_RE = re.compile(r"\.(?<=\d\.)(?=\d)")
_THOUSANDS_RE = re.compile(r",(?<=\d,)(?=\d)")
# runs, each a single class (a repeated alternation group cost 6x on a megabyte of '<')
_PUNCT_RE = re.compile(r"[^\w\s\x00]+|_+")
# The same on ASCII text (no whitespace but ' ' is left when it runs): every character
# that is not a letter, digit, blank or NUL becomes a blank, one C pass (the class scan
# above costs 60-90 ns a character, issue 41); the runs it leaves collapse in the split.
_ASCII_PUNCT = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c in " \x00")})
_ARTICLES = frozenset(("a", "an", "the"))
_DIGIT_RE = re.compile(r"\d")


def normalize_answer(s: Any) -> str:
    """SQuAD-style normalisation for exact match.

    Case-folded; apostrophes dropped (``don't`` → ``dont``); a ``.`` between digits
    kept as the decimal point (``3.5`` stays ``3.5``, not ``35``) and a ``,`` between
    digits dropped (``1,000`` → ``1000``); every other punctuation or symbol
    character (Unicode-aware) becomes a space (``dining-room`` → ``dining room``);
    the articles *a / an / the* removed; whitespace collapsed. Non-text is ``str()``-ed
    (``None`` → ``""``).
    """
    if not isinstance(s, str):
        try:
            s = "" if s is None else str(s)
        except ValueError:  # an int past Python's str() digit limit (10**5000)
            # hex is exempt from the limit; the NUL can never appear in a normalised
            # text, so such a gold is equal only to the same number
            return "\x00int:" + hex(s)
    # Whitespace runs collapsed first: no step below depends on their length, and a
    # megabyte of blanks was scanned by every pattern (issue 41: 0.13 s/MB -> 0.002).
    s = " ".join(s.casefold().split())
    for q in _APOSTROPHES:  # str.replace per mark: a C search, not a class scan per character
        if q in s:
            s = s.replace(q, "")
    # Protect decimal points with a NUL marker, drop thousands commas, then strip the rest
    # (a separator's neighbours are never separators: the two passes see what one saw).
    s = s.replace("\x00", " ")
    if "." in s or "," in s:
        s = _THOUSANDS_RE.sub("", _DECIMAL_POINT_RE.sub("\x00", s))
    s = (s.translate(_ASCII_PUNCT) if s.isascii() else _PUNCT_RE.sub(" ", s)).replace("\x00", ".")
    # what is left is words and digit groups between blanks: an article is a whole word
    words = s.split()
    if _ARTICLES.isdisjoint(words):  # one C-level pass; most long texts end here
        return " ".join(words)
    return " ".join(w for w in words if w not in _ARTICLES)


# --- answer numbers ----------------------------------------------------------

NUMBER_WORDS = {
    w: float(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}


def parse_answer_number(text: Any) -> Parsed:
    """The number a final answer states: the whole answer as a number ("105", "1,000",
    "-2.5"); else the whole normalised answer as an English number word zero…twenty
    ("Three." → 3); else the **first** number in the answer ("There are 105 chairs" →
    105). Numbers themselves pass through; ``bool`` is not a number."""
    exact = parse_exact_number(text)
    if exact.ok:
        return exact
    # a digit survives normalisation, and no number word has one: such a text is never
    # normalised (issue 41: EB counting on a megabyte of boxes spent 0.2 s doing it)
    if isinstance(text, str) and not _DIGIT_RE.search(text):
        word = normalize_answer(text)
        if word in NUMBER_WORDS:
            return Parsed(NUMBER_WORDS[word])
    got = parse_number(text)
    return got if got.ok else fail("no number in the answer")


# --- multiple-choice letters -------------------------------------------------

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Letters that are also English words; see extract_choice.
_WORD_LETTERS = frozenset("AI")
_BARE_STRIP = r"\s*_`()\[\]{}.:,;!"  # brackets, markdown, blanks and stops around a bare letter
# The answer is one character once those are removed: anchored, so a megabyte that is
# not one letter fails at its first other character (issue 41: removing them copied it all).
_BARE_ONE_RE = re.compile(rf"[{_BARE_STRIP}]*+([^{_BARE_STRIP}])[{_BARE_STRIP}]*+")


def _check_choices(choices: Any) -> str:
    if (
        not isinstance(choices, str)
        or not choices
        or any(c not in _ALPHABET for c in choices)
        or len(set(choices)) != len(choices)
    ):
        raise ValueError(
            f"choices must be a non-empty string of distinct upper-case letters A-Z, e.g. 'ABCD'; got {choices!r}"
        )
    return choices


def _choice_patterns(choices: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    cls = "[" + choices + "]"
    # A letter token: not glued to other word characters. "Marked" = wrapped in
    # ( ) / [ ], followed by . ) ] : or **, or ending its line.
    marked_end = r"(?:[.)\]:]|\*\*|[ \t]*(?:\r?\n|$))"
    leading = re.compile(r"^[\s*_`]*[(\[]?(" + cls + r")(?:" + marked_end + r"|(?=[ \t,]))")
    # \b(?i:answer|option|choice)\b led by its first letter (only a/A, o/O, c/C match those
    # case-insensitively), so the engine skips to the next candidate in C (issue 41: a
    # leading \b was tried at every position, 30-45 ms per MB of answer)
    cue = re.compile(
        r"[aAoOcC](?<!\w[aAoOcC])(?i:(?<=a)nswer|(?<=o)ption|(?<=c)hoice)\b[\s*_]*(?i:is\b|:)?[\s*_]*[(\[]?("
        + cls
        + r")(?![\w])("
        + marked_end
        + r")?"
    )
    wrapped = re.compile(r"[(\[](" + cls + r")[)\]]")
    return leading, cue, wrapped


def extract_choice(text: Any, choices: str = "ABCDEFGHIJ") -> Parsed:
    """A multiple-choice letter from the final answer (see :func:`extract_answer`).

    Only upper-case letters listed in ``choices`` count (a ``ValueError`` names a bad
    ``choices`` string). Tried in order on the final answer:

    1. **bare**: the answer is one letter once brackets, markdown, whitespace and
       ``. : , ; !`` are removed — "B", "B.", "(B)", "[B]", "**B**",
       "<|begin_of_box|>B<|end_of_box|>";
    2. **leading**: the answer starts with a letter token — "B) a red mug",
       "B. a red mug", "B: …", "(B) …", "**B.** …", "B because …";
    3. **cue**: the last "answer" / "option" / "choice" (+ "is" / ":") followed by a
       letter — "Answer: B", "the correct option is (C)";
    4. **parenthesised**: the answer holds exactly one distinct "(X)" / "[X]" letter —
       "I think (C)." (two different ones are ambiguous: no choice).

    The article rule: "A" and "I" are English words, so in rules 2 and 3 they count only
    when *marked* — wrapped in brackets, or followed by ``.``, ``)``, ``]``, ``:``,
    ``**`` or the end of the line. "A cat sits on the mat" has no choice; "A. a cat" is
    A. Other letters also count unmarked when followed by a space or comma ("B because
    …"). A letter glued to a word ("Bed", "A4") is never a choice.
    """
    letters = _check_choices(choices)
    ans = extract_answer(text)
    if not ans.ok:
        return ans
    return choice_in_answer(ans.value, letters)


def choice_in_answer(a: str, choices: str = "ABCDEFGHIJ") -> Parsed:
    """:func:`extract_choice` on a final answer already extracted (its rules 1-4), for a
    caller that holds it (issue 41: the Argos outcome extracted the answer twice).

    >>> choice_in_answer("(C) the mug").value
    'C'
    """
    letters = _check_choices(choices)
    bare = _BARE_ONE_RE.fullmatch(a)
    if bare and bare.group(1) in letters:
        return Parsed(bare.group(1))
    leading, cue, wrapped = _choice_patterns(letters)
    m = leading.match(a)
    if m:
        letter = m.group(1)
        is_marked = a[m.end(1) : m.end(1) + 1] in (".", ")", "]", ":", "*", "", "\n", "\r") or (
            a.lstrip(" \t*_`")[:1] in "(["
        )
        if letter not in _WORD_LETTERS or is_marked or _line_is_letter(a, m.end(1)):
            return Parsed(letter)
    last = None
    for c in cue.finditer(a):
        letter = c.group(1)
        opened = a[c.start(1) - 1 : c.start(1)] in ("(", "[")
        if letter not in _WORD_LETTERS or c.group(2) is not None or opened:
            last = letter
    if last is not None:
        return Parsed(last)
    found = set(wrapped.findall(a))
    if len(found) == 1:
        return Parsed(found.pop())
    if len(found) > 1:
        return fail(f"several bracketed letters {sorted(found)} in answer {a[:40]!r}")
    return fail(f"no choice letter in answer {a[:40]!r}")


def _line_is_letter(a: str, end: int) -> bool:
    """True when only blanks follow the letter up to the end of its line."""
    nl = a.find("\n", end)
    return not a[end : nl if nl != -1 else len(a)].strip()
