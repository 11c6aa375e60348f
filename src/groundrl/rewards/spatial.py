"""EmbodiedBrain spatial-perception rewards: multiple-choice and descriptive questions.

The paper's evaluator [EmbodiedBrain §4.2.2, item 3 "Spatial Perception Data"] has two
branches and states no numbers; what follows is its rules with our constants:

* **multiple choice** (:func:`spatial_mcq_reward`) — strictness follows the gold's form:
  a letter is read as a choice (:func:`groundrl.rewards.outcome.outcome`); a word or
  short phrase (≤ :data:`PHRASE_WORDS` words) passes when it appears as whole words in
  the answer (lenient); a sentence must match after
  :func:`~groundrl.parse.answers.normalize_answer` (strict);
* **descriptive** (:func:`spatial_descriptive_reward`) — meaning over wording: relation
  synonyms count as the same relation ("under", "below", "beneath"); an antonym
  (swapped preposition: "left of" for "right of") or a swapped subject and object
  contradicts the gold (0), and both at once is the same fact restated ("the cup is left
  of the plate" = "the plate is right of the cup", 1). When no relation can be read from
  the gold or the answer, the answer is judged as a free answer (exact match, then the
  ``semantic`` judge when one is given).

Both **penalise verbosity**: the correctness is multiplied by ``min(1, limit / words)``
where ``words`` counts the final answer's words (split at white space) and ``limit`` is
``max(MCQ_MIN_WORDS, 2 × gold words)`` (multiple choice) or
``max(DESCRIPTIVE_MIN_WORDS, 2 × gold words)`` (descriptive) [ours: the paper says only
that excessive verbosity is penalised]. Parsing is linear in the completion.
"""

from __future__ import annotations

import re
from typing import Any

from groundrl.parse.answers import extract_answer, normalize_answer
from groundrl.rewards.outcome import SemanticJudge, answer_type, outcome
from groundrl.types import Score

PHRASE_WORDS = 4  # [ours] a gold of up to 4 words is a "word/phrase", longer a "sentence"
MCQ_MIN_WORDS = 6  # [ours] an MCQ answer may name the letter and the option text
DESCRIPTIVE_MIN_WORDS = 12  # [ours] room for one plain sentence

# relation phrase -> canonical relation (synonyms share one); longest phrases first
_RELATIONS = {
    "to the left of": "left",
    "on the left of": "left",
    "left of": "left",
    "to the right of": "right",
    "on the right of": "right",
    "right of": "right",
    "on top of": "above",
    "above": "above",
    "over": "above",
    "higher than": "above",
    "underneath": "below",
    "beneath": "below",
    "below": "below",
    "under": "below",
    "lower than": "below",
    "in front of": "front",
    "before": "front",
    "behind": "behind",
    "in back of": "behind",
    "closer to": "closer",
    "nearer to": "closer",
    "farther from": "farther",
    "further from": "farther",
    "larger than": "larger",
    "bigger than": "larger",
    "smaller than": "smaller",
    "taller than": "taller",
    "shorter than": "shorter",
}
OPPOSITE = {
    "left": "right",
    "right": "left",
    "above": "below",
    "below": "above",
    "front": "behind",
    "behind": "front",
    "closer": "farther",
    "farther": "closer",
    "larger": "smaller",
    "smaller": "larger",
    "taller": "shorter",
    "shorter": "taller",
}
_REL_RE = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in sorted(_RELATIONS, key=len, reverse=True)) + r")\b"
)
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "it",
        "its",
        "located",
        "placed",
        "positioned",
        "sits",
        "stands",
        "lies",
        "of",
    ]
)


def _words(text: str) -> list[str]:
    return normalize_answer(text).split()


def _entity(text: str) -> frozenset[str]:
    return frozenset(w for w in _words(text) if w not in _FILLER)


def relation_triple(text: str) -> tuple[frozenset[str], str, frozenset[str]] | None:
    """``(subject words, relation, object words)`` around the first relation phrase, or
    ``None`` when there is none. Filler words (articles, "is", "located") are dropped.

    >>> s, r, o = relation_triple("The cup is to the left of the red plate.")
    >>> sorted(s), r, sorted(o)
    (['cup'], 'left', ['plate', 'red'])
    """
    low = " ".join(text.lower().split())
    m = _REL_RE.search(low)
    if m is None:
        return None
    return _entity(low[: m.start()]), _RELATIONS[m.group(1)], _entity(low[m.end() :])


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a) and bool(b) and (a <= b or b <= a)


def _verbosity(words: int, gold_words: int, floor: int) -> tuple[float, str]:
    limit = max(floor, 2 * gold_words)
    if words <= limit:
        return 1.0, ""
    return limit / words, f"; verbose: {words} words > {limit}, × {limit / words:.2f}"


def _answer_text(completion: Any) -> str:
    if not isinstance(completion, str):
        return ""
    ans = extract_answer(completion)
    return ans.value if ans.ok else completion


def spatial_mcq_reward(completion: Any, answer: Any) -> Score:
    """Multiple-choice spatial question (see the module doc).

    >>> spatial_mcq_reward("<answer>B</answer>", "B").value
    1.0
    >>> spatial_mcq_reward("<answer>the left side</answer>", "left").value
    1.0
    >>> long = "B, because the cup sits to the left of the plate which is next to the window of the room"
    >>> spatial_mcq_reward(f"<answer>{long}</answer>", "B").value  # 20 words > 6: × 6/20
    0.3
    """
    if answer is None:
        return Score("accuracy", None, "no gold answer")
    pred = _answer_text(completion)
    gold = str(answer)
    gold_words = _words(gold)
    if answer_type(answer) != "free":
        base = outcome(completion, answer)
        value, why = float(base.value or 0.0), base.reason
    elif len(gold_words) <= PHRASE_WORDS:
        hit = f" {' '.join(gold_words)} " in f" {' '.join(_words(pred))} " and bool(gold_words)
        value, why = float(hit), "phrase found in the answer" if hit else "phrase not in the answer"
    else:
        hit = normalize_answer(pred) == normalize_answer(gold)
        value, why = float(hit), "sentence matches" if hit else "sentence differs (strict match)"
    factor, note = _verbosity(len(pred.split()), len(gold.split()), MCQ_MIN_WORDS)
    return Score("accuracy", value * factor, why + note)


def spatial_descriptive_reward(completion: Any, answer: Any, semantic: SemanticJudge | None = None) -> Score:
    """Descriptive spatial question (see the module doc).

    >>> spatial_descriptive_reward("<answer>The plate is right of the cup.</answer>",
    ...                            "The cup is left of the plate.").value
    1.0
    >>> spatial_descriptive_reward("<answer>The cup is right of the plate.</answer>",
    ...                            "The cup is left of the plate.").value
    0.0
    """
    if answer is None:
        return Score("accuracy", None, "no gold answer")
    pred = _answer_text(completion)
    gold = str(answer)
    g, a = relation_triple(gold), relation_triple(pred)
    value, why = None, ""
    if g is not None and a is not None:
        (gs, gr, go), (ps, pr, po) = g, a
        entities = not (gs or go or ps or po)  # a bare relation ("left") against a bare relation
        same = entities or (_same(ps, gs) and _same(po, go))
        swapped = not entities and _same(ps, go) and _same(po, gs)
        if pr == gr and same:
            value, why = 1.0, f"same relation ({gr})"
        elif pr == OPPOSITE.get(gr) and swapped:
            value, why = 1.0, f"{pr} with subject and object swapped: the same fact"
        elif pr == OPPOSITE.get(gr) and same:
            value, why = 0.0, f"antonym: {pr} where the gold says {gr}"
        elif pr == gr and swapped:
            value, why = 0.0, "subject and object swapped"
    if value is None:
        base = outcome(pred, gold, semantic=semantic)
        value, why = float(base.value or 0.0), base.reason
    factor, note = _verbosity(len(pred.split()), len(gold.split()), DESCRIPTIVE_MIN_WORDS)
    return Score("accuracy", value * factor, why + note)
