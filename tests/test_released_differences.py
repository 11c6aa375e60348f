"""Where the rule rewards knowingly differ from the papers' released reward code (issue 30,
item 3), each shown on both sides: an input where groundrl and the released rule agree,
and one where they differ, with the value each gives.

The released rules are re-read here in a few plain lines each (``ast.literal_eval`` in
place of the released ``eval``); the released code itself is never part of the repository
(bench/rewards.py times it from a local checkout). docs/recipes.md lists the same cases.
"""

from __future__ import annotations

import ast
import re

import pytest

from groundrl.rewards.planning import DEFAULT_ATOMIC_ACTIONS, embodied_format, plan_f1, plan_order_f1
from groundrl.rewards.preference import proxy_format

# --- EmbodiedBrain: tuples in <actions> -------------------------------------------------------


def released_section(content, tag):
    """The released first-open / first-close check: the text between, or None."""
    s, e = re.search(f"<{tag}>", content, re.I), re.search(f"</{tag}>", content, re.I)
    return content[s.end() : e.start()] if s and e and s.start() < e.start() else None


def released_eb_actions(content):
    """PlanningActionSetORM._check_actions_section: (score, count)."""
    inner = released_section(content, "actions")
    if inner is None:
        return 0.0, 0
    try:
        items = ast.literal_eval(re.sub(r"\s+", " ", inner.strip()))
    except (ValueError, SyntaxError):
        return 0.0, 0
    if not isinstance(items, list) or not items:
        return 0.0, 0
    score = 0.0
    for a in items:
        if isinstance(a, list) and a and isinstance(a[0], str) and a[0] in DEFAULT_ATOMIC_ACTIONS:
            score += 1.0 if len(a) > 1 else 0.5
    return score / len(items), len(items)


def released_eb_format(content):
    resp = 1.0 if released_section(content, "response") is not None else 0.0
    plans = released_section(content, "plans")
    lines = re.findall(r"\d+\.\s*\[(\w+)\]", plans) if plans is not None else []
    plan = sum(t in ("Navigate", "Manipulate") for t in lines) / len(lines) if lines else 0.0
    act, n_act = released_eb_actions(content)
    if lines and n_act and len(lines) != n_act:
        plan, act = plan / 2, act / 2
    return 0.2 * resp + 0.3 * plan + 0.5 * act


HEAD = "<response>ok</response><plans>1.[Navigate] go\n2.[Manipulate] pick</plans>"


@pytest.mark.parametrize(
    "actions, ours, released",
    [
        ("[['Navigate', 'Table'], ['Pick', 'Apple']]", 1.0, 1.0),  # lists: both agree
        ("[('Navigate', 'Table'), ('Pick', 'Apple')]", 1.0, 0.5),  # tuple items: 0 each in the released code
        ("[['Navigate', 'Table'], ('Pick', 'Apple')]", 1.0, 0.75),
        ("(['Navigate', 'Table'], ['Pick', 'Apple'])", 1.0, 0.5),  # a top-level tuple: no actions there
        ("['Navigate', 'Table'], ['Pick', 'Apple']", 1.0, 0.5),  # no outer brackets: a tuple too
    ],
)
def test_embodied_format_tuples_both_sides(actions, ours, released):
    text = f"{HEAD}<actions>{actions}</actions>"
    assert released_eb_format(text) == pytest.approx(released)
    assert embodied_format(text).value == pytest.approx(ours)


def released_eb_prf(pred, gold):
    """The released evaluation core with exact matching: quantity and order F1."""

    def acts(text):
        m = re.search(r"<actions>\s*(.*?)\s*</actions>", text, re.S)
        try:
            v = ast.literal_eval(m.group(1).strip()) if m else []
        except (ValueError, SyntaxError):
            return []
        v = v if isinstance(v, list) else []
        out = []
        for a in v:
            if a and isinstance(a, list) and a[0].lower() not in ("navigate", "search", "find"):
                out.append([a[0].lower(), *a[1:]])
        return out

    p, g = acts(pred), acts(gold)
    k = sum(1 for a in p if a in g)  # enough for these one-of-each cases
    pr, rc = (k / len(p) if p else 0.0), k / len(g)
    return 2 * pr * rc / (pr + rc) if pr + rc else 0.0


GOLD = "<actions>[['Navigate', 'Table'], ['Pick', 'Apple'], ['Place', 'Apple', 'Bowl']]</actions>"


@pytest.mark.parametrize(
    "actions, ours, released",
    [
        ("[['Pick', 'Apple'], ['Place', 'Apple', 'Bowl']]", 1.0, 1.0),
        ("[('Pick', 'Apple'), ('Place', 'Apple', 'Bowl')]", 1.0, 0.0),  # tuple items skipped: no actions
        ("[['Pick', 'Apple'], ('Place', 'Apple', 'Bowl')]", 1.0, 2 / 3),  # one of two gold actions found
        ("(['Pick', 'Apple'], ['Place', 'Apple', 'Bowl'])", 1.0, 0.0),  # a top-level tuple
    ],
)
def test_plan_f1_tuples_both_sides(actions, ours, released):
    pred = f"<actions>{actions}</actions>"
    assert released_eb_prf(pred, GOLD) == pytest.approx(released)
    assert plan_f1(pred, GOLD).value == pytest.approx(ours)
    assert plan_order_f1(pred, GOLD).value == pytest.approx(ours)


# --- Proxy-GRM: the "<rubric" prefix count (aligned with the released code) ------------------


def released_verify_format(content):
    s = content.replace("\n", "")
    think = (
        bool(re.match(r"^<think>.*?</think><summary>.*?</summary><answer>.*?</answer>$", s, re.S))
        and s.count("<think>") == s.count("<answer>") == s.count("<summary>") == 1
    )
    rubric = (
        bool(re.match(r"^<rubric>.*?</rubric><eval>.*?</eval><answer>.*?</answer>$", s, re.S))
        and s.count("<rubric") == s.count("<answer>") == s.count("<eval>") == 1
    )
    return 1.0 if think or rubric else 0.0


@pytest.mark.parametrize(
    "text, value",
    [
        ("<rubric>1. accuracy</rubric><eval>R1 right</eval><answer>1</answer>", 1.0),
        ("<rubric><rubric_item>accuracy</rubric_item></rubric><eval>e</eval><answer>1</answer>", 0.0),
        ("<rubric>see <rubrics> below</rubric><eval>e</eval><answer>2</answer>", 0.0),
        ("<rubric>a <rubric id=2>b</rubric><eval>e</eval><answer>2</answer>", 0.0),
        ("<rubric>a</rubric><eval>e <rubric</eval><answer>2</answer>", 0.0),
        ("<think>a <thinking> b</think><summary>s</summary><answer>1</answer>", 1.0),  # whole <think> tags
    ],
)
def test_proxy_format_counts_the_rubric_prefix_as_released(text, value):
    assert released_verify_format(text) == value
    assert proxy_format(text).value == value


def test_proxy_format_rubric_prefix_reason():
    s = proxy_format("<rubric><rubric_item>a</rubric_item></rubric><eval>e</eval><answer>1</answer>")
    assert s.value == 0.0 and "<rubric> (or another <rubric… tag) occurs more than once" in s.reason
