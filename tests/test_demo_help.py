"""`groundrl demo` lists its named demos, each with its own help, and the RM demo's smoke
run (--quick) says it is one instead of judging its target (issue 39 item 6)."""

from __future__ import annotations

from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.demos.rm_demo import RMDemoConfig
from groundrl.demos.rm_demo_report import headline

runner = CliRunner()


def _help(*path: str) -> str:
    r = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    return " ".join(r.output.split())


def test_demo_help_lists_the_named_demos():
    text = _help("demo")
    assert (
        "Commands" in text and "rm EQA-RM's training story" in text and "monitor The reward-hacking" in text
    )


def test_demo_rm_help_is_the_rm_demos_own():
    text = _help("demo", "rm")
    assert (
        text.startswith("Usage: groundrl demo rm [OPTIONS]")
        and "C-GRPO steps (default 80; --quick 2)" in text
    )
    assert "GRPO steps (default 100" not in text and "--planner" not in text  # not the planner demo's
    assert "--steps" not in _help("demo", "monitor")


def test_an_unknown_demo_names_the_ones_there_are():
    r = runner.invoke(app, ["demo", "bogus"])
    assert r.exit_code == 2 and "unknown demo 'bogus'; named demos: monitor, real-model, rm" in r.output


def _metrics(smoke: bool) -> dict:
    flat = {"mean": 0.0, "ci95": [-0.1, 0.1], "n": 16}
    return {
        "config": {"smoke": smoke},
        "cgrpo_minus_sft": {k: flat for k in ("temporal", "spatial", "temporal_right", "spatial_right")},
    }


def test_a_quick_rm_run_is_labelled_a_smoke_run_not_judged():
    assert RMDemoConfig.quick().smoke and not RMDemoConfig().smoke
    full, smoke = "\n".join(headline(_metrics(False))), "\n".join(headline(_metrics(True)))
    assert "**NOT met**" in full and "smoke" not in full
    assert "NOT met" not in smoke and "Target: not judged: this is a smoke run (--quick)" in smoke
