"""Issue 16: long adversarial completions (≥ 100 KB) through every recipe and every
trainer adapter: a finite reward and parts for each, never an exception. Hypothesis with
a fixed seed and a bounded budget, so CI runs the same cases every time."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundrl.integrations import openrlhf, trl, verl
from groundrl.recipes import builtin_recipe_names, get_recipe

FRAGMENTS = [
    "<", ">", "<score>", "</score>", "<answer>", "</answer>", "<rubric>", "<eval>", "<critique>",
    "<actions>", "</actions>", "<plans>", "<response>", "[['Pick', 'Apple'], ", "[[", "]]", "{", "}",
    '{"executable_plan": [', '{"action_id": 1, "action_name": "find a Apple"}, ', '"', "'", "\\",
    "frame 1 ", "from 4.47 to 16.11 seconds ", "<points x1=", '"10" y1="20" alt="cup">', "1.[Navigate] ",
    "9" * 50, "1e999", "NaN", "\ud800", "é", "\x00", " ", "\n", "```json\n",
]  # fmt: skip
# valid fields for each built-in recipe, from its own examples (Recipe.examples): a new built-in
# is covered; an installed plugin is not ours to fuzz (issue 39 item 8)
SAMPLE_FIELDS = {name: get_recipe(name).example_fields() for name in builtin_recipe_names()}

long_text = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30).flatmap(
    lambda parts: st.integers(1, 3).map(
        lambda k: "".join(parts) * (k * 100_000 // max(1, len("".join(parts))) + 1)
    )
)


def _finite(x) -> bool:
    return x is None or (isinstance(x, float) and math.isfinite(x))


@pytest.mark.parametrize("name", list(SAMPLE_FIELDS))
@settings(derandomize=True, max_examples=6, deadline=None)
@given(text=long_text)
def test_every_recipe_and_adapter_stays_total(name, text):
    assert len(text) >= 100_000
    fields = SAMPLE_FIELDS[name]
    verdict = get_recipe(name).rubric().score(text, **fields)
    assert _finite(verdict.total) and all(_finite(s.value) for s in verdict.parts.values())

    funcs, _ = trl.reward_funcs(name)
    cols = {k: [v] for k, v in fields.items()}
    for f in funcs:
        assert all(_finite(v) for v in f(prompts=["p"], completions=[text], **cols))

    label = get_recipe(name).label_field
    out = verl.make_compute_score(name)(
        "src", text, fields[label], {k: v for k, v in fields.items() if k != label}
    )
    assert all(_finite(v) for v in out.values())

    res = openrlhf.make_reward_func(name, tensors=False)(["p" + text], ["p"], [json.dumps(fields)])
    assert all(_finite(v) for v in res["rewards"])
