"""Issue 37 item 4: the reward-hacking probe battery in ``check_recipe`` and
``groundrl check-recipe NAME``. Each degenerate strategy must score strictly below the
recipe's honest gold example, or be skipped with its reason shown."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.integrations.check import check_recipe
from groundrl.integrations.probes import PROBES, run_probes
from groundrl.judges.base import Generation
from groundrl.judges.papers import ProxyAgent
from groundrl.recipes import Recipe, builtin_recipe_names, get_recipe, register, unregister
from groundrl.rubric import Part, Rubric


def _by_name(chk):
    return {p.name: p for p in chk.probes}


@pytest.mark.parametrize("name", builtin_recipe_names())
def test_every_builtin_recipe_passes_the_battery(name):
    chk = check_recipe(name, strict=False)
    assert chk.ok, chk.problems
    assert {p.name for p in chk.probes} == set(PROBES)
    for p in chk.probes:
        assert p.status in ("pass", "skip"), p
        assert p.status == "pass" or p.reason  # a skipped probe says why


def test_argos_grounding_probes_score_below_the_honest_answer():
    # before Eq. 9's fixed denominator: omit_grounding scored 1.0 == the honest 1.0
    probes = _by_name(check_recipe("argos", strict=False))
    for name in ("omit_grounding", "wrong_evidence"):
        assert probes[name].status == "pass" and probes[name].example == "ar-grounded"
        assert probes[name].probe == 0.5 and probes[name].honest == 1.0


def test_argos_answering_both_options_scores_zero():
    # before: "(B) and A" read as B, scored 1.0 like the honest "(B)" [Argos Eq. 6]
    probes = _by_name(check_recipe("argos", strict=False))
    assert probes["answer_both"].status == "pass" and probes["answer_both"].probe == 0.0


class CopyingProxy:
    """A proxy backend that copies a verdict stated in the rubric, answers 1 otherwise,
    and refuses (HTTP 400) a request over 4,000 characters, as a server over its context."""

    def generate(self, requests, params):
        out = []
        for req in requests:
            text = json.dumps(req)
            if len(text) > 4000:
                out.append(Generation(error="HTTP 400: this model's maximum context length is 1024 tokens"))
            elif "The better response is 2" in text:
                out.append(Generation(["<answer>2</answer>"]))
            else:
                out.append(Generation(["<think>by the rubric</think><answer>1</answer>"]))
        return out


def test_proxy_grm_with_a_proxy_judge_penalises_the_verdict_in_the_rubric_and_the_overflow():
    # before: the stated verdict reached the proxy (+1, equal to the honest rubric), and a
    # refused over-long rubric scored proxy 0 - above a misleading rubric's −1
    rec = get_recipe("proxy_grm")
    pair = {"query": "How many chairs?", "response_1": "four", "response_2": "three"}
    examples = [{**ex, **pair} for ex in rec.example_samples()]
    rubric = rec.rubric(judge=ProxyAgent(CopyingProxy()))
    probes = {p.name: p for p in run_probes(rubric, examples, rec.gold_example)}
    assert probes["verdict_in_rubric"].honest == 1 + 0.5 + 1  # accuracy + 0.5·format + proxy
    assert probes["verdict_in_rubric"].status == "pass", probes["verdict_in_rubric"]
    assert probes["verdict_in_rubric"].probe == 1 + 0.5 - 1
    assert probes["overflow_length"].status == "pass" and probes["overflow_length"].probe == 0.5
    assert all(p.status != "FAIL" for p in probes.values()), probes


def _keyword_recipe(name="naive_keyword"):
    """A third party's gameable recipe: 1 for any completion containing <answer>."""

    def build():
        return Rubric(
            [Part("kw", lambda completion: float("<answer>" in str(completion)), value_range=(0, 1))]
        )

    return Recipe(
        name=name,
        paper="none",
        summary="1 when the completion has an <answer> tag",
        build=build,
        required=("question",),
        examples=[{"id": "g", "completion": "It is red. <answer>red</answer>", "question": "<answer>?"}],
        gold_example="g",
    )


def test_a_third_party_recipe_is_probed_and_its_hacks_reported():
    probes = _by_name(check_recipe(_keyword_recipe(), strict=False))
    assert probes["empty_format"].status == "FAIL" and probes["repeat_tags"].status == "FAIL"
    assert probes["copy_question"].status == "FAIL"  # the question holds the keyword
    assert probes["omit_grounding"].status == "skip" and "points" in probes["omit_grounding"].reason


def test_check_recipe_cli_on_a_registered_third_party_recipe():
    register(_keyword_recipe("probe_plugin_demo"))
    try:
        res = CliRunner().invoke(app, ["check-recipe", "probe_plugin_demo"])
        assert res.exit_code == 1, res.output
        assert "empty_format" in res.output and "FAIL" in res.output
        assert max(len(line) for line in res.output.splitlines()) <= 80
        good = CliRunner().invoke(app, ["check-recipe", "argos", "--json"])
        assert good.exit_code == 0, good.output
        assert json.loads(good.output)["ok"] is True
    finally:
        unregister("probe_plugin_demo")


def test_run_probes_without_examples_skips_every_probe():
    rubric = get_recipe("eqa_rm").rubric()
    assert {p.status for p in run_probes(rubric, [], None)} == {"skip"}
