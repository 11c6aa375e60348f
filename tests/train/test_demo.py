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
        keys = {"format_valid", "prefix_accuracy", "success_rate", "n_eval_tasks", "success_ci95"}
        assert keys <= set(m[stage]) and m[stage]["n_eval_tasks"] == 24
        lo, hi = m[stage]["success_ci95"]
        assert 0.0 <= lo <= m[stage]["success_rate"] <= hi <= 1.0
    lo, hi = m["grpo_minus_sft_success_ci95"]
    assert -1.0 <= lo <= m["grpo_minus_sft_success"] <= hi <= 1.0
    for stage in ("sft", "grpo"):  # sampled (temperature 1) episode success, as GRPO trains
        lo, hi = m[stage]["sampled_success_ci95"]
        assert 0.0 <= lo <= m[stage]["sampled_success_rate"] <= hi <= 1.0
    # a random model writes no valid plan; SFT on expert plans must
    assert m["untrained"]["format_valid"] == 0.0
    assert m["sft"]["format_valid"] > m["untrained"]["format_valid"]
    assert m["sft"]["format_valid"] >= 0.3
    # GRPO ran with the environment in the loop: per step, the episode reward and success
    assert len(m["grpo_curve"]) == 6
    assert all(0.0 <= c["success"] <= 1.0 and 1.0 <= c["turns"] <= 3.0 for c in m["grpo_curve"])
    assert m["grpo_rollouts_per_second"] > 0
    assert (tmp_path / "reward_curve.png").stat().st_size > 1000
    assert "| sft |" in (tmp_path / "report.md").read_text()
    # every file is listed, the PNG included; no empty TRL output folder is left behind
    for name in ("report.md", "reward_curve.png", "metrics.json", "action_map.json"):
        assert str(tmp_path / name) in r.output
    assert not (tmp_path / "grpo").exists()
    assert all("reward_std" in c for c in m["grpo_curve"])
    assert "paired bootstrap 95% CI" in (tmp_path / "report.md").read_text()
    # held-out success split by whether the instruction occurs in training
    k = m["n_eval_instruction_seen_in_training"]
    assert (
        0 <= k <= 24 and "repeat the instruction of a training task" in (tmp_path / "report.md").read_text()
    )
    for stage in ("untrained", "sft", "grpo"):
        assert {"success_rate_seen_instruction", "success_rate_new_instruction"} <= set(m[stage])


def test_seen_split_hand_worked():
    from groundrl.train.demo import seen_split

    got = seen_split([1, 0, 1, 1], [True, True, False, True])
    assert got == {"success_rate_seen_instruction": 0.6667, "success_rate_new_instruction": 1.0}
    assert seen_split([1], [True])["success_rate_new_instruction"] is None  # no new instruction


def test_reward_curve_plots_without_steps(tmp_path):
    from groundrl.train.demo import plot_curve

    plot_curve([], [3.0, 2.0], tmp_path / "c.png", group=8)  # a run with no logged GRPO step
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_bootstrap_ci_hand_worked():
    from groundrl.train.demo import bootstrap_ci

    assert bootstrap_ci([1, 1, 1, 1]) == (1.0, 1.0)
    assert bootstrap_ci([0, 0, 0, 0], [1, 1, 1, 1]) == (1.0, 1.0)  # paired: every task gained
    assert bootstrap_ci([1, 0, 1, 0], [1, 0, 1, 0]) == (0.0, 0.0)  # same tasks, no difference
    lo, hi = bootstrap_ci([0] * 50 + [1] * 50, seed=1)
    assert lo < 0.5 < hi and hi - lo < 0.3  # ≈ ±1.96·√(.25/100) = ±0.098
    assert bootstrap_ci([0, 1], seed=3) == bootstrap_ci([0, 1], seed=3)  # seeded
