"""Every reward is total: any text in, a finite score out, never an exception — also on
adversarial megabyte completions (their time budgets: bench/adversarial.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrl.recipes import builtin_recipe_names, get_recipe

# ours: a new built-in is covered; an installed plugin is check_recipe's to vet (issue 39 item 8)
RECIPE_NAMES = builtin_recipe_names()
# Valid fields for each recipe, from its own examples; the completion is what varies.
FIELDS = {name: get_recipe(name).example_fields() for name in RECIPE_NAMES}

TAGGY = st.lists(
    st.sampled_from(
        [
            "<critique>",
            "</critique>",
            "<score>",
            "</score>",
            "7",
            "11",
            "-1",
            "<rubric>",
            "</rubric>",
            "<eval>",
            "</eval>",
            "<answer>",
            "</answer>",
            "1",
            "2",
            "<response>",
            "</response>",
            "<plans>",
            "</plans>",
            "1.[Navigate] go",
            "<actions>",
            "</actions>",
            "[['Pick','Apple']]",
            "[[",
            "]]",
            "{",
            "}",
            '"executable_plan": [',
            '{"action_id": 0, "action_name": "find a Apple"}',
            "```json",
            "```",
            '<points x1="3" y1="4" alt="cup">cup</points>',
            "<points x1=",
            "frame 3",
            "(B)",
            "\n",
            " ",
            "\x00",
        ]
    ),
    max_size=40,
).map("".join)


def rubrics():
    return {name: get_recipe(name).rubric(**get_recipe(name).example_options) for name in RECIPE_NAMES}


RUBRICS = rubrics()


def check(name, completion):
    v = RUBRICS[name].score(completion, **FIELDS[name])
    assert isinstance(v.total, float) and math.isfinite(v.total)
    for s in v.parts.values():
        assert s.value is None or math.isfinite(s.value)
        # a part that failed inside must not hide a bug: errors show up as "error:" reasons
        assert not s.reason.startswith("error:"), (name, s)


@pytest.mark.parametrize("name", RECIPE_NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400))
def test_arbitrary_text(name, text):
    check(name, text)


@pytest.mark.parametrize("name", RECIPE_NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TAGGY)
def test_tag_soup(name, text):
    check(name, text)


@pytest.mark.parametrize("name", RECIPE_NAMES)
@pytest.mark.parametrize("completion", [None, 12, 3.5, [], {}, ["a"], b"bytes"])
def test_non_text_completions(name, completion):
    check(name, completion)


ADVERSARIAL = {
    "open_angles": "<" * 100_000 + "x" * 900_000,
    "unclosed_tags": "<critique><score><rubric><eval><answer><response><plans><actions><points x1='1'"
    * 12_000,
    "deep_json": "{" * 300_000 + '"a":' + "[" * 300_000,
    "deep_list": "<actions>" + "[" * 500_000 + "</actions>",
    "many_pairs": "<score>1</score><answer>2</answer>" * 30_000,
    "numbers": "-1e" * 330_000,
}


@pytest.mark.parametrize("name", RECIPE_NAMES)
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_megabyte_adversarial_is_total(name, kind):
    # time budgets for these inputs: bench/adversarial.py (tests assert no wall-clock time)
    check(name, ADVERSARIAL[kind])
