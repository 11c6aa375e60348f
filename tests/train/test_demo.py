"""The demo's quick mode end to end: real SFT and TRL GRPO on a model built from config."""

import json

import pytest

pytest.importorskip("trl")


@pytest.mark.slow
def test_quick_demo_learns(tmp_path):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    r = CliRunner().invoke(app, ["demo", "--quick", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["n_eval_tasks"] == 24
    for stage in ("untrained", "sft", "grpo"):
        assert {"format_valid", "prefix_accuracy", "success_rate"} <= set(m[stage])
    # a random model writes no valid plan; SFT on expert plans must
    assert m["untrained"]["format_valid"] == 0.0
    assert m["sft"]["format_valid"] > m["untrained"]["format_valid"]
    assert m["sft"]["format_valid"] >= 0.3
    assert len(m["grpo_curve"]) == 6 and m["online_filter"]["seen"] > 0
    assert (tmp_path / "reward_curve.png").stat().st_size > 1000
    assert "| sft |" in (tmp_path / "report.md").read_text()
    # every file is listed, the PNG included; no empty TRL output folder is left behind
    for name in ("report.md", "reward_curve.png", "metrics.json", "action_map.json"):
        assert str(tmp_path / name) in r.output
    assert not (tmp_path / "grpo").exists()
    assert all("reward_std" in c for c in m["grpo_curve"])


def test_reward_curve_plots_without_steps(tmp_path):
    from groundrl.train.demo import plot_curve

    plot_curve([], [3.0, 2.0], tmp_path / "c.png", group=8)  # a run with no logged GRPO step
    assert (tmp_path / "c.png").stat().st_size > 1000
