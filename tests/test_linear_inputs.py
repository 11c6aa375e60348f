"""Linear or bounded work on long inputs, tested by behaviour and by counting work —
never by wall-clock time (timings live in bench/rewards.py).

* temporal mentions: every regex scan is counted (characters handed to the engine);
  the total stays within a constant times the input on long adversarial inputs, and the
  mentions are capped (issue 16, P1);
* EmbodiedBrain plan F1: past :data:`MAX_PLAN_ACTIONS` canonical actions a side, a
  score with a reason and no |pred|×|gold| matrix (P2);
* huge numbers in labels are a score with a reason (A3).
"""

from __future__ import annotations

import pytest

from groundrl.parse import grounding
from groundrl.rewards import planning
from groundrl.rewards.critique_score import eqa_accuracy
from groundrl.rewards.outcome import outcome
from groundrl.rewards.planning import MAX_PLAN_ACTIONS, plan_f1, plan_order_f1, planning_scores


class CountingPattern:
    """Wraps a compiled regex; adds up the span of text each call may scan."""

    def __init__(self, pattern, counter):
        self._p, self._c = pattern, counter

    def _span(self, text, pos=0, endpos=None):
        end = len(text) if endpos is None else min(endpos, len(text))
        self._c[0] += max(0, end - pos)

    def finditer(self, text, pos=0, endpos=None):
        self._span(text, pos, endpos)
        return self._p.finditer(text, pos, len(text) if endpos is None else endpos)

    def search(self, text, pos=0, endpos=None):
        self._span(text, pos, endpos)
        return self._p.search(text, pos, len(text) if endpos is None else endpos)

    def findall(self, text, pos=0, endpos=None):
        self._span(text, pos, endpos)
        return self._p.findall(text, pos, len(text) if endpos is None else endpos)


@pytest.fixture
def scanned(monkeypatch):
    counter = [0]
    for name, value in vars(grounding).items():
        if name.endswith("_RE") and hasattr(value, "finditer"):
            monkeypatch.setattr(grounding, name, CountingPattern(value, counter))
    return counter


ADVERSARIAL = [
    "frame 1 ",  # the issue-16 reproducer (× 20,000 took 57.6 s before)
    "1",  # one long run of digits
    "frames 1, ",
    "between frames 1 and ",
    "from 1 to ",
    "1 s ",
    "frame 1 - ",
    "1.",
    ". ",
]


@pytest.mark.parametrize("unit", ADVERSARIAL)
def test_temporal_mentions_scan_linear_and_capped(scanned, unit):
    per_char = []
    for reps in (2_000, 20_000):
        text = unit * reps
        scanned[0] = 0
        frames, segments = grounding.extract_temporal_mentions(text)
        assert len(frames) <= grounding.MAX_MENTIONS and len(segments) <= grounding.MAX_MENTIONS
        # whole-text scans by a fixed set of regexes, plus bounded context windows
        per_mention = 2 * grounding.CONTEXT_CHARS + 2
        budget = 8 * len(text) + 2 * grounding.MAX_MENTIONS * per_mention
        assert len(text) <= scanned[0] <= budget, (unit, reps, scanned[0], budget)
        per_char.append(scanned[0] / len(text))
    assert per_char[1] <= per_char[0] + 8  # no growth with the input


def test_frame_reproducer_finds_the_capped_mentions():
    frames, segments = grounding.extract_temporal_mentions("frame 1 " * 20_000)
    assert len(frames) == grounding.MAX_MENTIONS and segments == []
    assert {f.at for f in frames} == {1.0}


def _actions(n, verb="Pick"):
    return "<actions>" + repr([[verb, f"obj{i}"] for i in range(n)]) + "</actions>"


@pytest.fixture
def no_quadratic(monkeypatch):
    def boom(*_a, **_k):
        raise AssertionError("the |pred|x|gold| matrix was built past the cap")

    monkeypatch.setattr(planning, "_lcs", boom)
    planning._planning_scores_text.cache_clear()
    yield
    planning._planning_scores_text.cache_clear()


def test_plan_f1_past_the_cap_is_a_reason_not_a_quadratic_run(no_quadratic):
    big, small = _actions(1_000), _actions(10)  # within MAX_LITERAL_CHARS, past the action cap
    for part in (plan_f1, plan_order_f1):
        s = part(big, small)  # completion past the cap: its fault, scored 0
        assert s.value == 0.0 and f"cap of {MAX_PLAN_ACTIONS}" in s.reason
        s = part(small, big)  # gold past the cap: not applicable
        assert s.value is None and "gold has 1000 actions" in s.reason
    # the public P/R/F1: a gold past the cap is undefined, a completion past it all 0
    assert planning_scores(small, big) is None
    assert planning_scores(big, small)["quantity"].f1 == 0.0


def test_plan_f1_at_the_cap_is_scored():
    at = _actions(MAX_PLAN_ACTIONS)
    planning._planning_scores_text.cache_clear()
    assert plan_f1(at, at).value == 1.0
    assert plan_order_f1(at, at).value == 1.0
    # locomotion does not count towards the cap (it is dropped first)
    padded = "<actions>" + repr([["Navigate", "x"]] * 1_000 + [["Pick", "a"]]) + "</actions>"
    assert plan_f1(padded, _actions(1, "Pick").replace("obj0", "a")).value == 1.0


def test_matrix_work_is_bounded_by_the_cap(monkeypatch):
    calls = [0]

    def counting(a, b):
        calls[0] += 1
        return a == b

    planning_scores(_actions(1_000), _actions(MAX_PLAN_ACTIONS), matcher=counting)
    assert calls[0] == 0
    planning_scores(_actions(MAX_PLAN_ACTIONS), _actions(MAX_PLAN_ACTIONS), matcher=counting)
    assert calls[0] == MAX_PLAN_ACTIONS**2


@pytest.mark.parametrize("gold", [10**400, 10**5000, -(10**5000)], ids=["1e400", "1e5000", "-1e5000"])
def test_eqa_accuracy_huge_gold_is_a_reason(gold):
    s = eqa_accuracy("<score>7</score>", gold)
    assert s.value == 0.0 and "bad gt_score" in s.reason and "too large" in s.reason


@pytest.mark.parametrize(
    "gold", [10**400, 10**5000, [10**5000], -(10**5000)], ids=["1e400", "1e5000", "list", "-1e5000"]
)
def test_outcome_huge_gold_is_a_reason(gold):
    for semantic in (None, lambda a, b: 1.0):
        s = outcome("<answer>7</answer>", gold, semantic=semantic)
        assert s.value == 0.0 and "too large for a float" in s.reason


def test_outcome_huge_gold_does_not_hide_a_matching_gold():
    assert outcome("<answer>7</answer>", [10**5000, 7]).value == 1.0


def test_literal_past_its_cap_is_a_reason():
    from groundrl.parse.structured import MAX_LITERAL_CHARS, parse_literal_list

    long_list = repr([["Pick", "x" * 20]] * (MAX_LITERAL_CHARS // 20))
    r = parse_literal_list(long_list)
    assert not r.ok and f"longer than {MAX_LITERAL_CHARS}" in r.error
    # whitespace collapses first: a list padded with spaces past the cap still parses
    assert parse_literal_list("[" + " " * MAX_LITERAL_CHARS + "'a']").value == ["a"]
