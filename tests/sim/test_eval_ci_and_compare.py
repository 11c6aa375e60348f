"""``sim eval``'s intervals, INPUT grammar and raw answers, and ``sim compare``'s paired
difference — on hand-built tasks whose outcomes are known before the run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.sim import CPU_MAX_TOKENS, GPU_MAX_TOKENS, app, default_max_tokens
from groundrl.sim.goals import Goal
from groundrl.sim.tasks import Task
from groundrl.sim.world import Obj, Scene

runner = CliRunner()
WIDE = 4096  # PATH_MAX: no path in an error message wraps [ours]
PLAN = [
    "find a Apple",
    "pick up the Apple",
    "find a Fridge",
    "open the Fridge",
    "put down the object in hand",
]


def run(*args):
    """The CLI on a terminal wider than any test path: error boxes hold whole lines, so
    a check on a message does not depend on where the checkout or tmp dir lies."""
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": str(WIDE)})


@pytest.fixture
def tasks(tmp_path):
    """Eight copies of "apple in fridge": four in subset base, four in spatial."""
    scene = Scene(
        "kitchen",
        [
            Obj("CounterTop_1", "CounterTop"),
            Obj("Fridge_1", "Fridge"),
            Obj("Apple_1", "Apple", "CounterTop_1"),
        ],
    )
    goal = Goal("pick_and_place_simple", "Apple", "Fridge")
    rows = [
        Task(f"t{i}", "Put an apple in the fridge.", scene, goal, "base" if i < 4 else "spatial")
        for i in range(8)
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t.to_json()) + "\n" for t in rows))
    return path


def plans_for(path, solved):
    """A plans file: the working plan for ``solved`` ids, prose for the others."""
    path.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "plan": PLAN if i in solved else "I will not plan."}) + "\n"
            for i in range(8)
        )
    )
    return path


def test_eval_reports_wilson_intervals_and_keeps_raw_answers(tasks, tmp_path):
    plans = plans_for(tmp_path / "p.jsonl", {0, 1, 2, 4})
    d = tmp_path / "run"
    r = run("eval", tasks, "--policy", "file", "--plans", plans, "-o", d)  # positional INPUT
    assert r.exit_code == 0, r.output
    m = json.loads((d / "metrics.json").read_text())
    assert m["success_rate"] == 0.5
    # Wilson 95% for 4 / 8: centre (0.5 + 1.92/8) / (1 + 3.84/8), half-width 0.2806 -> [0.2152, 0.7848]
    assert m["success_ci95"] == pytest.approx([0.2152, 0.7848], abs=1e-4)
    # base 3 / 4 -> [0.301, 0.954] (the doctest value of wilson_ci)
    assert m["by_subset"]["base"]["success_ci95"] == pytest.approx([0.301, 0.954], abs=1e-3)
    assert "95% CI" in r.output and "[0.22, 0.78]" in r.output  # the console table too
    report = (d / "report.md").read_text()
    assert "(95% CI [0.215, 0.785])" in report and "| 95% CI |" in report
    assert "dashed lines are the overall rates" in report
    rows = [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines()]
    assert rows[3]["answers"][0] == "I will not plan."  # the unreadable answer, kept verbatim
    # --tasks is an alias of INPUT; two different sources are refused
    assert run("eval", "--tasks", tasks, "--policy", "expert", "-o", tmp_path / "e").exit_code == 0
    r = run("eval", tasks, "--tasks", plans, "--policy", "expert", "-o", tmp_path / "e")
    assert r.exit_code != 0 and "two task sources" in r.output
    r = run("eval", "--policy", "expert", "-o", tmp_path / "e")
    assert r.exit_code != 0 and "INPUT" in r.output


def test_one_panel_and_one_table_when_subsets_are_the_task_types(tmp_path, tasks):
    # every task in subset "pick_and_place_simple" = its task type, as in ALFRED trajectory folders
    rows = [json.loads(line) for line in tasks.read_text().splitlines()]
    for row in rows:
        row["subset"] = row["task_type"]
    same = tmp_path / "same.jsonl"
    same.write_text("".join(json.dumps(x) + "\n" for x in rows))
    d = tmp_path / "same"
    assert run("eval", same, "--policy", "expert", "-o", d).exit_code == 0
    report = (d / "report.md").read_text()
    assert "## By subset (= task type)" in report and "## By task type" not in report
    assert (d / "success.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_pairs_runs_per_task(tasks, tmp_path):
    a, b = tmp_path / "A", tmp_path / "B"
    assert (
        run(
            "eval", tasks, "--policy", "file", "--plans", plans_for(tmp_path / "a.jsonl", {0, 1, 4}), "-o", a
        ).exit_code
        == 0
    )
    assert (
        run(
            "eval",
            tasks,
            "--policy",
            "file",
            "--plans",
            plans_for(tmp_path / "b.jsonl", {1, 2, 4, 5, 6}),
            "-o",
            b,
        ).exit_code
        == 0
    )
    out = tmp_path / "cmp"
    r = run("compare", a, b, "-o", out, "--seed", 3)
    assert r.exit_code == 0, r.output
    c = json.loads((out / "compare.json").read_text())
    # A solves {0,1,4}, B {1,2,4,5,6}: only A {0}, only B {2,5,6}; B - A = (3 - 1) / 8
    assert (c["only_a"], c["only_b"], c["n_tasks"]) == (1, 3, 8)
    assert c["b_minus_a"] == pytest.approx(0.25)
    lo, hi = c["b_minus_a_ci95"]
    assert -1 <= lo <= 0.25 <= hi <= 1 and lo < hi
    # per subset: base A {0,1} B {1,2}: 0; spatial A {4} B {4,5,6}: +0.5
    assert c["by_subset"]["base"]["b_minus_a"] == 0 and c["by_subset"]["spatial"]["b_minus_a"] == 0.5
    assert "+0.250" in r.output and (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a run against itself: no difference, and an interval of exactly zero width
    r = run("compare", a, a, "-o", tmp_path / "self")
    c = json.loads((tmp_path / "self" / "compare.json").read_text())
    assert (
        c["b_minus_a"] == 0
        and c["b_minus_a_ci95"] == [0, 0]
        and "do not tell A and B apart" in (tmp_path / "self" / "compare.md").read_text()
    )
    # every task solved by both (Wilson's upper end of 8/8 is a rounding error below 1.0)
    full = tmp_path / "full"
    assert run("eval", tasks, "--policy", "expert", "-o", full).exit_code == 0
    r = run("compare", a, full, "-o", tmp_path / "full-cmp")
    assert r.exit_code == 0 and "+0.625" in r.output, r.output  # (8 - 3) / 8
    # a folder that is not a sim eval run is named in the error
    r = run("compare", a, tmp_path, "-o", tmp_path / "x")
    assert r.exit_code != 0 and "results.jsonl" in r.output


def test_model_policy_max_tokens_default_fits_the_machine():
    assert default_max_tokens("openai") == GPU_MAX_TOKENS
    import torch

    want = GPU_MAX_TOKENS if torch.cuda.is_available() else CPU_MAX_TOKENS
    assert default_max_tokens("transformers") == want and CPU_MAX_TOKENS < GPU_MAX_TOKENS


def test_dash_pipes_tasks_from_sim_tasks_into_sim_eval(tmp_path):
    r = run("tasks", "-o", "-", "--n", 6, "--seed", 3)
    assert r.exit_code == 0
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 6 and "wrote 6 tasks to stdout" in r.output
    d = tmp_path / "piped"
    r = runner.invoke(app, ["eval", "-", "--policy", "expert", "-o", str(d)], input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    m = json.loads((d / "metrics.json").read_text())
    assert m["n_tasks"] == 6 and m["success_rate"] == 1.0 and m["config"]["tasks"] == "-"
    assert "expert on stdin" in (d / "report.md").read_text()
    r = run("eval", tmp_path / "missing.jsonl", "-o", d)
    assert r.exit_code == 2 and "does not exist" in r.output
