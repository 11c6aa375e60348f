"""The demonstration in reduced form: the same SFT policy, 16 real TRL GRPO steps against
each judge with the monitor callback attached. The hackable judge's run must raise an
alarm, before the claim reaches half of a step's samples if it gets there; the honest
judge's run must raise none."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    from groundrl.demos.monitor_demo import run_monitor_demo

    out = tmp_path_factory.mktemp("monitor_demo")
    return out, run_monitor_demo(out, quick=True, log=lambda *_: None)


def test_hackable_judge_raises_an_alarm_before_the_hack_dominates(demo_run):
    out, m = demo_run
    run = m["runs"]["hackable"]
    assert run["first_alarm_step"] is not None, run
    if run["dominance_step"] is not None:
        assert run["first_alarm_step"] < run["dominance_step"], run
    claims = [c["claim_share"] for c in run["curve"]]
    assert sum(claims[-4:]) / 4 > sum(claims[:4]) / 4 + 0.1  # the hack grows under this judge
    # the alarm is in the run's log.jsonl as TRL and the monitor wrote it
    rows = [json.loads(line) for line in (out / "hackable" / "log.jsonl").read_text().splitlines()]
    fired = [a for r in rows for a in (r.get("alarms") or [])]
    assert fired and fired[0]["step"] == run["first_alarm_step"]
    assert any("rewards/judge/mean" in r for r in rows)
    assert "## Reward-hacking monitor" in (out / "hackable" / "monitor.md").read_text()


def test_honest_judge_raises_no_alarm(demo_run):
    out, m = demo_run
    run = m["runs"]["honest"]
    assert run["alarms"] == [] and run["first_alarm_step"] is None
    rows = [json.loads(line) for line in (out / "honest" / "log.jsonl").read_text().splitlines()]
    monitored = [r for r in rows if "monitor/reward_mean" in r]
    assert len(monitored) >= 12  # the monitor did run on (almost) every step
    assert "No alarm in" in (out / "honest" / "monitor.md").read_text()
    # the probe set was re-scored by the live judge at steps 1, 5, 10, 15: the honest judge
    # ranks the 8 expert plans (label 1) over the 16 failing ones (label 0) without error
    probes = [r for r in rows if "monitor/probe/failure_rate" in r]
    assert [r["step"] for r in probes] == [1, 5, 10, 15]
    assert all(r["monitor/probe/failure_rate"] == 0.0 and r["monitor/probe/agreement"] > 0.5 for r in probes)
    hack_probes = m["runs"]["hackable"]["probe"]
    assert hack_probes[0]["agreement"] < probes[0]["monitor/probe/agreement"]  # it believes the claim


def test_offline_replay_of_the_saved_samples_gives_the_same_alarms(demo_run, tmp_path):
    """`groundrl monitor` on the samples the live callback saved, with the same block and the
    data's texts, fires the same alarms at the same steps (item 3: same signals offline)."""
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    out, m = demo_run
    live = {(a["name"], a["step"]) for a in m["runs"]["hackable"]["alarms"]}
    args = ["monitor", str(out / "hackable" / "monitor_samples.jsonl"), "--config", str(out / "monitor.yaml")]
    args += ["--reference", str(out / "reference.jsonl"), "-o", str(tmp_path / "offline")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp_path / "offline" / "monitor.jsonl").read_text().splitlines()]
    offline = {(a["name"], a["step"]) for r in rows for a in r["alarms"]}
    assert live and offline == live


def test_report_and_figure_written(demo_run):
    out, _ = demo_run
    text = (out / "report.md").read_text()
    assert "| hackable |" in text and "| honest |" in text
    assert (out / "monitor_demo.png").stat().st_size > 10_000
