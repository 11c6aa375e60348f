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
