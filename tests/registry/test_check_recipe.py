"""check_recipe (issue 23 item 4): every built-in passes; a broken third-party recipe is caught
on each count; `demo --score-examples` scores a plugin from its own examples instead of crashing."""

import pytest
from typer.testing import CliRunner

from groundrl.integrations.check import RecipeCheckError, check_recipe
from groundrl.recipes import builtin_recipe_names, recipe_names
from groundrl.recipes.base import Recipe
from groundrl.rubric import Part, Rubric


@pytest.mark.parametrize(
    "name", builtin_recipe_names()
)  # a new built-in is checked too; a plugin is not ours
def test_every_builtin_passes(name):
    chk = check_recipe(name)
    assert chk.ok
    assert chk.counts["adapter:TRL"] == chk.counts["adapter:verl"] == chk.counts["adapter:OpenRLHF"] >= 3
    assert chk.counts["scored"] > 50  # hostile completions and hostile field values were tried


def _plugin(name, fn, examples, value_range=(0.0, 1.0), gold=None):
    def build():
        return Rubric([Part("exact", fn, value_range=value_range)], name=name)

    return Recipe(
        name=name,
        paper="test",
        summary="exact match",
        build=build,
        required=("answer",),
        label_field="answer",
        examples=examples,
        gold_example=gold,
    )


GOOD = [{"id": "g", "completion": "yes", "answer": "yes"}, {"id": "b", "completion": "no", "answer": "yes"}]


def test_example_fields_are_the_richest_examples_fields_without_completion_and_id():
    rich = {"id": "r", "completion": "x", "answer": "yes", "masks": {"cup": [[0, 0, 1, 1]]}}
    plain = {"id": "p", "completion": "y", "answer": "no"}
    rec = _plugin("t_fields", lambda completion, answer=None: 0.0, [plain, rich, {**rich, "id": "r2"}])
    assert rec.example_fields() == {"answer": "yes", "masks": {"cup": [[0, 0, 1, 1]]}}
    rec.example_fields()["answer"] = "changed"  # a copy: the recipe's examples stay as they were
    assert rec.example_samples()[1]["answer"] == "yes"
    with pytest.raises(ValueError, match="recipe 't_none' has no examples; give it Recipe"):
        _plugin("t_none", lambda completion, answer=None: 0.0, ()).example_fields()


def test_a_sound_plugin_passes():
    def exact(completion, answer=None):
        return float(isinstance(completion, str) and completion.strip() == answer)

    assert check_recipe(_plugin("t_sound", exact, GOOD, gold="g")).ok


def test_a_part_that_raises_on_hostile_input_is_named():
    def strict(completion, answer=None):
        return float(completion.strip() == answer)  # AttributeError on None / lists

    chk = check_recipe(_plugin("t_raises", strict, GOOD), strict=False)
    assert any("with completion None" in p and "part exact raised (AttributeError" in p for p in chk.problems)


def test_totals_outside_the_declared_range_and_a_weak_gold_are_named():
    def doubled(completion, answer=None):
        return 2.0 if completion == answer else 0.5

    chk = check_recipe(_plugin("t_range", doubled, GOOD, gold="b"), strict=False)
    assert any("outside value_range (0.0, 1.0)" in p for p in chk.problems)
    assert any("gold example b scores 0.5, not the maximum 1.0" in p for p in chk.problems)
    with pytest.raises(RecipeCheckError, match="t_range"):
        check_recipe(_plugin("t_range", doubled, GOOD, gold="b"))


def test_missing_examples_and_fields_are_named():
    def exact(completion, answer=None):
        return 0.0

    assert "no examples" in check_recipe(_plugin("t_none", exact, []), strict=False).problems[0]
    chk = check_recipe(
        _plugin("t_fields", exact, [{"id": "x", "completion": "a"}], gold="nope"), strict=False
    )
    assert any("missing field(s) ['answer']" in p for p in chk.problems)
    assert any("gold_example 'nope' is not among" in p for p in chk.problems)


def test_score_examples_includes_a_plugin_without_crashing(tmp_path, monkeypatch):
    import groundrl.recipes as registry
    from groundrl.cli.main import app

    def exact(completion, answer=None):
        return float(isinstance(completion, str) and completion.strip() == answer)

    # registered for this test only: every later test sees the five built-ins again
    for name, examples in (("t_demo_plugin", GOOD), ("t_demo_bare", [])):
        monkeypatch.setitem(
            registry.RECIPES._items, name, _plugin(name, exact, examples, gold="g" if examples else None)
        )
    assert "t_demo_plugin" in recipe_names()
    r = CliRunner().invoke(app, ["demo", "--score-examples", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t_demo_plugin.scores.jsonl").read_text().count("\n") == 2
    assert "t_demo_bare: no examples (Recipe.examples); skipped" in r.output
