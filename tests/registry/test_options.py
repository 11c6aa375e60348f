"""Recipe options declared once: typed conversion, early errors that name the recipe,
the option and the allowed ones, -O / alias / YAML / adapter agreement, the recipes
listing and the docs table generated from the declarations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.recipes import Option, OptionError, Recipe, get_recipe
from groundrl.rubric import Part, Rubric

ROOT = Path(__file__).resolve().parents[2]
FENCED = (
    "```json\n"
    + json.dumps(
        {
            "reasoning_and_reflection": "r",
            "visual_state_description": "v",
            "language_plan": "l",
            "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
        }
    )
    + "\n```"
)


@pytest.mark.parametrize(
    "type_, text, want",
    [
        ("bool", "TRUE", True),
        ("bool", "no", False),
        ("bool", "0", False),
        ("int", "7", 7),
        ("int", 3.0, 3),
        ("float", "0.25", 0.25),
        ("list", "a, b ,c", ["a", "b", "c"]),
        ("list", '["x", "y,z"]', ["x", "y,z"]),
        ("json", '{"outcome": 2}', {"outcome": 2}),
        ("str", "x=y", "x=y"),
    ],
)
def test_conversion(type_, text, want):
    assert Option("o", type_).convert(text, "r") == want


@pytest.mark.parametrize(
    "type_, value, needle",
    [
        ("bool", "maybe", "expected a boolean"),
        ("int", True, "expected an integer"),
        ("int", "1.5", "expected an integer"),
        ("float", "nan", "finite"),
        ("float", "x", "expected a number"),
        ("path", "/no/such/file.json", "no such file"),
        ("path", {"0": "a"}, "expected a path"),
        ("json", "{bad", "expected JSON"),
        ("object", "text", "cannot be set from text"),
    ],
)
def test_bad_values_name_recipe_and_option(type_, value, needle):
    with pytest.raises(OptionError, match=rf"recipe 'r', option 'o': .*{needle}"):
        Option("o", type_).convert(value, "r")


def test_choices_and_declaration_checks():
    with pytest.raises(OptionError, match="'c' is not one of a, b"):
        Option("o", "str", choices=("a", "b")).convert("c", "r")
    with pytest.raises(ValueError, match="type 'colour'"):
        Option("o", "colour")

    def build(alpha: float = 1.0) -> Rubric:
        return Rubric([Part("x", lambda completion: alpha)])

    with pytest.raises(
        ValueError, match=r"build\(\) takes \['alpha'\] but the declared options are \['beta'\]"
    ):
        Recipe(name="r", paper="p", summary="s", build=build, options=(Option("beta", "float"),))


def test_unknown_option_lists_the_allowed_ones_on_every_surface():
    from groundrl.integrations import openrlhf, trl, verl

    msg = r"recipe 'reinforced_planning' has no option 'colour' \(options: action_map, lenient, action_maps\)"
    for make in (
        lambda: get_recipe("reinforced_planning").rubric(colour=1),
        lambda: trl.reward_funcs("reinforced_planning", recipe_options={"colour": 1}),
        lambda: verl.make_compute_score("reinforced_planning", colour=1),
        lambda: openrlhf.make_reward_func("reinforced_planning", colour=1),
    ):
        with pytest.raises(OptionError, match=msg):
            make()


def _flat(output: str) -> str:
    """The CLI's error box as one line (rich wraps long messages inside │ … │)."""
    return " ".join(output.replace("│", " ").split())


def _score(tmp_path, *args):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"completion": FENCED, "gold": ["find a Apple"]}) + "\n")
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(app, ["score", "reinforced_planning", str(data), "-o", str(out), "-q", *args])
    r.output_flat = _flat(r.output)
    return r, (json.loads(out.read_text()) if r.exit_code == 0 else None)


def test_cli_option_alias_and_errors_agree(tmp_path):
    _, strict = _score(tmp_path)
    _, by_o = _score(tmp_path, "-O", "lenient=true")
    _, by_alias = _score(tmp_path, "--lenient")
    _, both = _score(tmp_path, "--lenient", "-O", "lenient=yes")
    assert strict["reward"] != by_o["reward"]  # lenient reads the fenced plan, strict does not
    assert by_o == by_alias == both
    r, _ = _score(tmp_path, "-O", "colour=red")
    assert (
        r.exit_code == 2
        and "has no option 'colour'" in r.output_flat
        and "action_map, lenient" in r.output_flat
    )
    r, _ = _score(tmp_path, "-O", "lenient=maybe")
    assert r.exit_code == 2 and "expected a boolean" in r.output_flat
    r, _ = _score(tmp_path, "-O", "lenient")
    assert r.exit_code == 2 and "KEY=VALUE" in r.output_flat
    r, _ = _score(tmp_path, "--no-lenient", "-O", "lenient=true")
    assert r.exit_code == 2 and "disagree" in r.output_flat


def test_train_yaml_options_are_checked_before_any_model(tmp_path):
    from groundrl.train.config import ConfigError, build_train_config

    build_train_config({"data": "x.jsonl", "recipe_options": {"tau": "0.3"}}, "argos")
    with pytest.raises(ConfigError, match="recipe_options: .*option 'tau': expected a number"):
        build_train_config({"data": "x.jsonl", "recipe_options": {"tau": "high"}}, "argos")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("data: x.jsonl\n")
    r = CliRunner().invoke(app, ["train", "eqa_rm", "--config", str(cfg), "-O", "tau=1"])
    assert r.exit_code == 2 and "recipe 'eqa_rm' has no option 'tau'" in _flat(r.output)


def test_recipes_json_lists_the_five_with_options():
    r = CliRunner().invoke(app, ["recipes", "--json"])
    listed = {x["name"]: x for x in json.loads(r.output)}
    assert set(listed) >= {"reinforced_planning", "embodied_brain", "eqa_rm", "proxy_grm", "argos"}
    assert [o["name"] for o in listed["argos"]["options"]] == ["tau", "weights", "judge", "verifier"]
    tau = listed["argos"]["options"][0]
    assert (tau["type"], tau["default"]) == ("float", 0.5) and tau["help"]
    assert listed["eqa_rm"]["required"] == ["completion", "gt_score"]


def test_docs_table_is_generated_from_the_declarations():
    from groundrl.cli.recipes import _describe_all, markdown

    assert markdown(_describe_all()) in (ROOT / "docs" / "recipes.md").read_text()


def test_public_api_imports_without_torch():
    import subprocess
    import sys

    code = (
        "import sys; from groundrl import Rubric, Part, Score, Verdict, Recipe, Option, get_recipe, register,"
        " JudgeConfig; from groundrl.rewards import eqa_accuracy, plan_f1; print('torch' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
    r = subprocess.run([sys.executable, "-m", "groundrl", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("groundrl ")


def test_register_in_process():
    from groundrl.recipes import recipe_names, register, unregister

    rec = Recipe(name="tmp_recipe", paper="p", summary="s", build=lambda: Rubric([Part("x", lambda c: 1.0)]))
    try:
        assert register(rec) is rec and "tmp_recipe" in recipe_names()
        with pytest.raises(ValueError, match="already registered"):
            register(Recipe(name="tmp_recipe", paper="p", summary="s", build=rec.build))
        with pytest.raises(ValueError, match="built-in"):
            register(Recipe(name="eqa_rm", paper="p", summary="s", build=rec.build))
    finally:
        unregister("tmp_recipe")
