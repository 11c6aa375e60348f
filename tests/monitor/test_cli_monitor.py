"""``groundrl monitor`` on a samples file and log.jsonl, and ``groundrl demo WHAT`` errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from groundrl.cli.main import app


def _samples():
    rows = []
    for step in range(1, 6):
        hacked = step == 5
        for i in range(4):
            passed = i < 2
            judge = 1.0 if passed or (hacked and i == 2) else 0.0
            text = "pick apple verified" if hacked and i == 2 else f"pick apple {i}"
            rows.append({"step": step, "completion": text, "judge": judge, "ok": float(passed)})
    return rows


def test_monitor_command_writes_rows_and_report(tmp_path):
    samples = tmp_path / "samples.jsonl"
    samples.write_text("\n".join(json.dumps(r) for r in _samples()) + "\n")
    cfg = tmp_path / "train.yaml"
    cfg.write_text("model: x\nmonitor:\n  window: 1\n  baseline_steps: 2\n  min_samples: 4\n")
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"stage": "grpo", "step": 5, "kl": 0.5}) + "\n")
    out = tmp_path / "mon"
    args = ["monitor", str(samples), "--config", str(cfg), "--reward", "judge", "--truth", "ok"]
    res = CliRunner().invoke(app, [*args, "--log", str(log), "-o", str(out), "--fail-on-alarm"])
    assert res.exit_code == 1, res.output  # --fail-on-alarm: the hack at step 5
    assert "step 5: hack_share_rise" in res.output
    rows = [json.loads(line) for line in (out / "monitor.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5]
    # step 5: 1 of 4 samples has judge 1 and failed truth, baseline 0
    assert rows[-1]["monitor/hack_share"] == 0.25 and rows[-1]["monitor/kl"] == 0.5
    assert "`hack_share_rise`" in (out / "monitor.md").read_text()
    res = CliRunner().invoke(app, [*args, "-o", str(out)])
    assert res.exit_code == 0


def test_monitor_command_names_a_bad_key(tmp_path):
    samples = tmp_path / "s.jsonl"
    samples.write_text("{}\n")
    cfg = tmp_path / "m.yaml"
    cfg.write_text("monitor:\n  windw: 3\n")
    res = CliRunner().invoke(app, ["monitor", str(samples), "--config", str(cfg), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "unknown key 'windw'" in res.output


def test_demo_rejects_an_unknown_named_demo():
    res = CliRunner().invoke(app, ["demo", "bogus"])
    assert res.exit_code == 2 and "named demos: monitor" in res.output
