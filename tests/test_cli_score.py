import json

from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.examples import example_action_map, example_file

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(map(str, args)))


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_help_lists_recipes():
    r = run("score", "--help")
    assert r.exit_code == 0
    assert "reinforced_planning" in r.output and "--action-map" in r.output


def test_score_reinforced_planning_examples(tmp_path):
    out = tmp_path / "out.jsonl"
    r = run(
        "score",
        "reinforced_planning",
        example_file("reinforced_planning"),
        "-o",
        out,
        "--action-map",
        example_action_map(),
    )
    assert r.exit_code == 0, r.output
    rows = {row["id"]: row for row in read_jsonl(out)}
    # perfect plan: format 0.125 + 0.125 + 0.25, accuracy 1
    assert rows["rp-perfect"]["parts"] == {"format": 0.5, "accuracy": 1.0}
    assert rows["rp-perfect"]["reward"] == 1.5
    # gold of 6 steps, predicted prefix of 3 correct: 3·4 / (6·7)
    assert rows["rp-prefix"]["parts"]["accuracy"] == round(12 / 42, 6)  # floats rounded to 6 decimals
    # missing key: 0 + 0.125 + 0.25
    assert rows["rp-missing-key"]["parts"]["format"] == 0.375
    # fenced JSON is not strict JSON
    assert rows["rp-fenced"]["reward"] == 0.0 and rows["rp-fenced"]["reasons"]
    assert rows["rp-garbage"]["reward"] == 0.0


def test_lenient_accepts_fenced_plan(tmp_path):
    out = tmp_path / "out.jsonl"
    r = run(
        "score",
        "reinforced_planning",
        example_file("reinforced_planning"),
        "-o",
        out,
        "--action-map",
        example_action_map(),
        "--lenient",
    )
    assert r.exit_code == 0, r.output
    rows = {row["id"]: row for row in read_jsonl(out)}
    # two correct steps of a 6-step gold: 2·3 / (6·7); full format
    assert rows["rp-fenced"]["parts"] == {"format": 0.5, "accuracy": round(6 / 42, 6)}


def test_bad_lines_get_error_records_and_exit_1(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(
        "\n".join(
            [
                json.dumps(
                    {"id": "ok", "completion": "<critique>c</critique><score>7</score>", "gt_score": 7}
                ),
                "not json",
                json.dumps({"id": "nogt", "completion": "<score>1</score>"}),
                json.dumps([1, 2]),
                "",
                json.dumps(
                    {"id": "ok2", "completion": "<critique>c</critique><score>5</score>", "gt_score": 7}
                ),
            ]
        )
    )
    out = tmp_path / "out.jsonl"
    r = run("score", "eqa_rm", src, "-o", out)
    assert r.exit_code == 1
    rows = read_jsonl(out)
    assert [row.get("id") for row in rows] == ["ok", None, "nogt", None, "ok2"]
    assert rows[0]["parts"] == {"accuracy": 1.0, "format": 1.0}
    assert "not JSON" in rows[1]["error"]
    assert "missing field 'gt_score'" in rows[2]["error"]
    assert "expected an object" in rows[3]["error"]
    # |5 - 7| = 2: 1 - (2/10)^2
    assert abs(rows[4]["parts"]["accuracy"] - 0.96) < 1e-12
    assert "3 of 5 lines could not be scored" in r.output  # 3 bad of 5 non-blank lines


def test_unknown_recipe_and_misplaced_option(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text("{}\n")
    r = run("score", "nope", f)
    assert r.exit_code != 0 and "unknown recipe" in r.output
    r = run("score", "eqa_rm", f, "--action-map", example_action_map())
    assert r.exit_code != 0 and "has no option 'action_map'" in r.output


def test_every_recipe_example_scores_without_errors(tmp_path):
    from groundrl.recipes import RECIPE_NAMES

    for name in RECIPE_NAMES:
        out = tmp_path / f"{name}.jsonl"
        extra = ["--action-map", example_action_map()] if name == "reinforced_planning" else []
        r = run("score", name, example_file(name), "-o", out, *extra)
        assert r.exit_code == 0, (name, r.output)
        assert all("error" not in row for row in read_jsonl(out))


def test_limit_scores_the_first_lines(tmp_path):
    out = tmp_path / "out.jsonl"
    r = run("score", "eqa_rm", example_file("eqa_rm"), "-o", out, "-q", "--limit", "2")
    assert r.exit_code == 0, r.output
    assert [row["line"] for row in read_jsonl(out)] == [1, 2]


def test_ray_option_says_what_to_install_without_ray():
    import importlib.util

    import pytest

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here; tests/integrations drives --ray for real")
    r = run("score", "eqa_rm", example_file("eqa_rm"), "--ray", "-q")
    assert r.exit_code == 2 and "ray[data]" in r.output
    r = run("score", "eqa_rm", example_file("eqa_rm"), "--ray", "--workers", "2")
    assert r.exit_code == 2 and "pick one" in " ".join(r.output.replace("│", " ").split())
