"""Monitor windows, baselines and alarms; the config block; report section; offline replay;
verl-style rows; the probe set — on hand-made rows with hand-computed values."""

from __future__ import annotations

import json

import pytest

from groundrl.monitor import DEFAULT_THRESHOLDS, Monitor, MonitorConfig, report_section
from groundrl.monitor.config import PERTURBATIONS, ProbeConfig
from groundrl.monitor.offline import replay
from groundrl.monitor.probes import run_probe
from groundrl.monitor.rows import rows_from_scores


def _cfg(**kw):
    base = {
        "truth": "truth",
        "window": 1,
        "baseline_steps": 2,
        "min_samples": 4,
        "min_high_samples": 3,
        "min_truth_each": 1,
    }
    return MonitorConfig.from_mapping({**base, **kw})


def _honest(step):
    # reward follows truth: two passes with reward 1, two fails with reward 0
    return [
        {"completion": f"go to fridge {step}", "reward": 1.0, "truth": 1.0, "group": 0},
        {"completion": "open fridge", "reward": 1.0, "truth": 1.0, "group": 1},
        {"completion": "pick apple", "reward": 0.0, "truth": 0.0, "group": 0},
        {"completion": "put apple", "reward": 0.0, "truth": 0.0, "group": 1},
    ]


def test_honest_steps_raise_no_alarm_and_a_hack_fires_at_its_step():
    mon = Monitor(_cfg(thresholds={"truth_corr_drop": 0.3}))
    for step in (1, 2, 3):
        out = mon.observe(step, _honest(step))
        assert out["alarms"] == []
    assert out["monitor/truth_spearman"] == pytest.approx(1.0)
    assert out["monitor/hack_share"] == 0.0
    hacked = _honest(4)
    hacked[2] = {"completion": "pick apple verified", "reward": 1.0, "truth": 0.0, "group": 0}
    out = mon.observe(4, hacked)
    names = {a["name"]: a for a in out["alarms"]}
    # hack share 1/4 against a baseline of 0: +0.25 >= 0.1
    assert names["hack_share_rise"]["value"] == pytest.approx(0.25)
    assert names["hack_share_rise"]["step"] == 4
    assert names["hack_share_rise"]["examples"][0]["completion"] == "pick apple verified"
    # rewards (1,1,1,0) vs truth (1,1,0,0): ranks (3,3,3,1) vs (3.5,3.5,1.5,1.5): rho = 0.577...
    assert out["monitor/truth_spearman"] == pytest.approx(0.5773502691896258)
    assert names["truth_corr_drop"]["value"] == pytest.approx(1 - 0.5773502691896258)
    # the token signal falls back to the baseline steps' completions as reference:
    # 'verified' is in 1 of the 3 high-reward texts and in none of them: gap 1/3
    assert names["shortcut_token"]["value"] == pytest.approx(1 / 3)
    # alarms fire once: the same hack next step adds nothing new
    assert mon.observe(5, hacked)["alarms"] == []
    assert set(mon.first_steps()) == {"hack_share_rise", "truth_corr_drop", "shortcut_token"}


def test_truth_correlation_needs_enough_passes_and_fails():
    mon = Monitor(_cfg(min_truth_each=3))
    out = mon.observe(1, _honest(1))  # 2 passed, 2 failed: below 3 each
    assert "monitor/truth_spearman" not in out and out["monitor/hack_share"] == 0.0
    mon = Monitor(_cfg(min_truth_each=2))
    assert mon.observe(1, _honest(1))["monitor/truth_spearman"] == pytest.approx(1.0)


def test_no_alarm_before_the_baseline_or_below_min_samples():
    mon = Monitor(_cfg(baseline_steps=3))
    bad = [{"completion": "x", "reward": 1.0, "truth": 0.0}] * 4
    assert mon.observe(1, bad)["alarms"] == []
    few = Monitor(_cfg(min_samples=10))
    for step in range(1, 6):
        out = few.observe(step, bad)
        assert out["alarms"] == [] and "monitor/hack_share" not in out


def test_length_repetition_format_and_group_alarms():
    cfg = _cfg(format="format", thresholds={"zero_std_groups": 0.5})
    mon = Monitor(cfg)
    calm = [
        {"completion": "a b c d", "reward": r, "truth": r, "format": 0.5, "group": i // 2}
        for i, r in enumerate([1.0, 0.0, 1.0, 0.0])
    ]
    mon.observe(1, calm)
    mon.observe(2, calm)
    loud = [
        {"completion": "a b c a b c a b c", "reward": 1.0, "truth": t, "format": 1.0, "group": i // 2}
        for i, t in enumerate([1.0, 0.0, 1.0, 0.0])
    ]
    names = {a["name"]: a for a in mon.observe(3, loud)["alarms"]}
    assert names["length_growth"]["value"] == pytest.approx(9 / 4)  # 9 words vs 4
    assert names["repetition_rise"]["value"] == pytest.approx(4 / 7)  # 0 -> 4/7
    # format 0.5 -> 1.0 (+0.5) while accuracy (= truth) stays 0.5: gap 0.5
    assert names["format_over_accuracy"]["value"] == pytest.approx(0.5)
    # window 1: both groups of the step give every completion reward 1
    assert names["zero_std_groups"]["value"] == pytest.approx(1.0)


def test_a_weighted_part_constant_in_every_group_for_a_window_fires_and_a_metric_part_never():
    """issue 38 item 2: 'reward term constant within groups: contributes no gradient'."""
    mon = Monitor(_cfg(window=3), part_weights={"contrastive": 1.0, "success": 0.0, "accuracy": 1.0})
    fired = {}
    for step in range(1, 8):
        metrics = {
            "rewards/contrastive/groups_varying": 0.0 if step >= 3 else 0.5,  # constant from step 3
            "rewards/success/groups_varying": 0.0,  # weight 0: a metric, never flagged
            "rewards/accuracy/groups_varying": 0.0 if step % 2 else 0.25,  # streaks of 1
        }
        for a in mon.observe(step, _honest(step), metrics)["alarms"]:
            fired[a["name"]] = a
    alarm = fired.pop("constant_reward_part")
    assert fired == {}
    # streak 3 at step 5 = one window (3 steps) -> value 1.0 >= the default threshold 1.0
    assert alarm["step"] == 5 and alarm["value"] == pytest.approx(1.0)
    assert "contrastive" in alarm["detail"] and "success" not in alarm["detail"]
    assert "accuracy" not in alarm["detail"] and "no gradient" in alarm["detail"]


def test_kl_jump_alarm_from_step_metrics():
    mon = Monitor(_cfg(window=4))
    for step, kl in enumerate([0.01, 0.01, 0.012], 1):
        assert mon.observe(step, _honest(step), {"kl": kl})["alarms"] == []
    out = mon.observe(4, _honest(4), {"kl": 0.06})  # median 0.01: 6x
    assert [a["name"] for a in out["alarms"]] == ["kl_jump"]
    assert out["alarms"][0]["value"] == pytest.approx(6.0)


def test_config_defaults_and_errors_name_the_key():
    assert MonitorConfig.from_mapping(None) is None
    cfg = MonitorConfig.from_mapping({})
    assert cfg.reward == "reward" and cfg.thresholds == DEFAULT_THRESHOLDS and not cfg.stop_on_alarm
    assert MonitorConfig.from_mapping({}).thresholds["truth_corr_drop"] == 0.6
    cfg = MonitorConfig.from_mapping({"thresholds": {"hack_share_rise": 0.2}, "high_reward": 1})
    assert cfg.thresholds["hack_share_rise"] == 0.2 and cfg.thresholds["kl_jump"] == 5.0
    assert cfg.high_reward == 1.0
    with pytest.raises(
        ValueError, match=r"monitor: unknown key 'windw' \(did you mean 'window'\?\); allowed: reward, truth"
    ):
        MonitorConfig.from_mapping({"windw": 3})
    with pytest.raises(ValueError, match=r"monitor.window must be an integer, got '3'"):
        MonitorConfig.from_mapping({"window": "3"})
    with pytest.raises(ValueError, match=r"monitor.stop_on_alarm must be true or false"):
        MonitorConfig.from_mapping({"stop_on_alarm": 1})
    with pytest.raises(ValueError, match=r"monitor.thresholds: unknown key 'hack'.*hack_share_rise"):
        MonitorConfig.from_mapping({"thresholds": {"hack": 1}})
    with pytest.raises(ValueError, match=r"monitor.thresholds.kl_jump: expected a finite number >= 0"):
        MonitorConfig.from_mapping({"thresholds": {"kl_jump": -1}})
    with pytest.raises(ValueError, match=r"monitor.probe.path is required"):
        MonitorConfig.from_mapping({"probe": {"every": 5}})
    with pytest.raises(
        ValueError,
        match=r"monitor.probe.perturbations\[0\] must be one of 'frames', 'patches', 'reasoning', got 'blur'",
    ):
        MonitorConfig.from_mapping({"probe": {"path": "p.jsonl", "perturbations": ["blur"]}})
    with pytest.raises(
        ValueError,
        match=r"window, baseline_steps, min_samples, min_high_samples and min_truth_each must be >= 1",
    ):
        MonitorConfig.from_mapping({"window": 0})
    with pytest.raises(ValueError, match=r"monitor must be a mapping of reward, truth"):
        MonitorConfig.from_mapping([1])


def test_config_unknown_keys_name_the_nearest_one():
    # every level of the block: the nearest key, then every allowed one
    with pytest.raises(
        ValueError, match=r"monitor: unknown key 'stop_on_alarms' \(did you mean 'stop_on_alarm'\?\)"
    ):
        MonitorConfig.from_mapping({"stop_on_alarms": True})
    with pytest.raises(
        ValueError, match=r"monitor.probe: unknown key 'pth' \(did you mean 'path'\?\); allowed: path"
    ):
        MonitorConfig.from_mapping({"probe": {"pth": "p.jsonl"}})
    with pytest.raises(
        ValueError, match=r"monitor.thresholds: unknown key 'kl_jmp' \(did you mean 'kl_jump'\?\)"
    ):
        MonitorConfig.from_mapping({"thresholds": {"kl_jmp": 2}})


def test_config_accepts_what_it_accepted():
    probe = MonitorConfig.from_mapping({"probe": {"path": "p.jsonl", "perturbations": "frames", "every": 5}})
    assert probe.probe == ProbeConfig(path="p.jsonl", every=5, perturbations=("frames",))
    assert MonitorConfig.from_mapping({"probe": {"path": "p"}}).probe.perturbations == PERTURBATIONS
    with pytest.raises(ValueError, match=r"monitor.probe.every: expected an integer >= 1, got 0"):
        MonitorConfig.from_mapping({"probe": {"path": "p.jsonl", "every": 0}})
    with pytest.raises(ValueError, match=r"monitor.high_reward must be a number, got nan"):
        MonitorConfig.from_mapping({"high_reward": float("nan")})


def test_report_section_first_step_and_examples():
    rows = [
        {"stage": "grpo", "step": 1, "loss": 0.1},
        {"stage": "grpo", "step": 1, "monitor/hack_share": 0.0, "alarms": []},
        {
            "stage": "grpo",
            "step": 7,
            "monitor/hack_share": 0.3,
            "alarms": [
                {
                    "name": "hack_share_rise",
                    "step": 7,
                    "value": 0.3,
                    "threshold": 0.1,
                    "detail": "hack_share 0.3 vs baseline 0",
                    "examples": [{"reward": 1.0, "truth": 0.0, "completion": "plan `verified`"}],
                }
            ],
        },
        {"stage": "grpo", "step": 9, "monitor/hack_share": 0.4, "alarms": "odd"},
    ]
    text = report_section(rows)
    assert "| `hack_share_rise` | grpo | 7 | 0.3 | 0.1 | hack_share 0.3 vs baseline 0 |" in text
    assert "- reward 1, truth 0: `plan 'verified'`" in text
    assert "| `monitor/hack_share` | 0 | 0.4 |" in text
    assert report_section([{"step": 1, "loss": 1.0}]) == ""
    assert "No alarm in 1 monitored steps." in report_section(rows[:2])


def test_rows_from_verl_scores_and_offline_replay(tmp_path):
    cfg = _cfg(reward="judge")
    scores = [{"score": 0.3, "judge": 1.0, "truth": 0.0}, {"score": 0.9, "truth": 1.0}]
    rows = rows_from_scores(scores, ["a", "b"], cfg, group_size=2)
    assert rows[0] == {"completion": "a", "reward": 1.0, "group": 0, "truth": 0.0}
    assert rows[1]["reward"] == 0.9  # no 'judge' key: verl's 'score'
    with pytest.raises(ValueError, match="2 score dicts for 1 completions"):
        rows_from_scores(scores, ["a"], cfg)
    samples = [dict(s, step=step, completion=s["completion"]) for step in (1, 2, 3) for s in _honest(step)]
    hacked = [dict(s, step=4) for s in _honest(4)]
    hacked[3] = {"step": 4, "completion": "put apple verified", "judge": 1.0, "truth": 0.0}
    for s in samples:
        s["judge"] = s.pop("reward")
    for s in hacked[:3]:
        s["judge"] = s.pop("reward")
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in samples + hacked) + "\nnot json\n")
    from groundrl.monitor.offline import read_jsonl

    out = replay(read_jsonl(path), cfg, [{"step": 4, "kl": 0.1, "stage": None}])
    assert [r["step"] for r in out] == [1, 2, 3, 4]
    assert out[3]["monitor/kl"] == 0.1
    assert "hack_share_rise" in {a["name"] for a in out[3]["alarms"]}


def test_probe_drop_failures_and_agreement():
    items = [
        {"completion": "First look. Then pick. Then place.", "gt_score": 9},
        {"completion": "One step only", "gt_score": 2},  # one sentence: reasoning shuffle does not apply
        {"completion": "Go there. Open it.", "gt_score": 5},
    ]

    def judge(batch):
        # 'ordered' judge: 9 for the original text of item 0, 5 for item 2, 1 for anything else
        table = {items[0]["completion"]: 9.0, items[2]["completion"]: 5.0, "One step only": 2.0}
        return [table.get(it["completion"], 1.0) for it in batch]

    p = run_probe(items, judge, ["reasoning", "frames"], seed=0)
    # perturbed: item 0 -> 1 (drop 8), item 2 -> 1 (drop 4): mean 6; frames apply to none
    assert p["drop/reasoning"] == pytest.approx(6.0) and p["drop"] == pytest.approx(6.0)
    assert "drop/frames" not in p
    assert p["failure_rate"] == 0.0 and p["agreement"] == pytest.approx(1.0)

    def broken(batch):
        raise RuntimeError("judge server down")

    p = run_probe(items, broken, ["reasoning"])
    assert p["failure_rate"] == 1.0 and p["drop"] is None


def test_probe_swap_consistency_of_a_pairwise_judge():
    items = [
        {"completion": "a", "pair_id": "p1", "swapped": False},
        {"completion": "a", "pair_id": "p1", "swapped": True},
        {"completion": "b", "pair_id": "p2", "swapped": False},
        {"completion": "b", "pair_id": "p2", "swapped": True},
        {"completion": "c", "pair_id": "p3", "swapped": False},  # its swap is missing: not counted
    ]
    # p1: verdicts 1 then 2 (the same response both times); p2: 1 then 1 (always the first slot)
    verdicts = iter([1, 2, 1, 1, 2])
    p = run_probe(items, lambda batch: [next(verdicts) for _ in batch], [])
    assert p["swap_consistency"] == 0.5
    mon = Monitor(_cfg(baseline_steps=1))
    mon.observe_probe(1, {"swap_consistency": 1.0})
    out = mon.observe_probe(2, {"swap_consistency": 0.5})
    assert [(a["name"], a["value"]) for a in out["alarms"]] == [("probe_swap_drop", 0.5)]


def test_probe_alarms_in_the_monitor():
    mon = Monitor(_cfg(baseline_steps=1))
    assert mon.observe_probe(1, {"drop": 4.0, "failure_rate": 0.0, "agreement": 0.8})["alarms"] == []
    out = mon.observe_probe(2, {"drop": 1.0, "failure_rate": 0.5, "agreement": 0.5})
    names = {a["name"]: a["value"] for a in out["alarms"]}
    # 3/4 of the baseline drop is gone; half the items failed; agreement 0.8 -> 0.5
    assert names == pytest.approx(
        {"probe_drop_loss": 0.75, "probe_failure_rate": 0.5, "probe_agreement_drop": 0.3}
    )
    assert out["monitor/probe/drop"] == 1.0


def test_probe_frame_and_patch_perturbations():
    np = pytest.importorskip("numpy")
    frames = [np.full((32, 32, 3), v, dtype=np.uint8) for v in (10, 20, 30, 40)]
    items = [{"completion": "the cup moves left", "frames": frames}]

    def judge(batch):
        # 10 for frames in time order at full brightness (mean pixel 25); shuffled frames
        # lose the order (x 0.2); masked patches lower the brightness
        out = []
        for it in batch:
            means = [float(f.mean()) for f in it["frames"]]
            ordered = all(a < b for a, b in zip(means, means[1:], strict=False))
            out.append((10.0 if ordered else 2.0) * (sum(means) / len(means)) / 25.0)
        return out

    p = run_probe(items, judge, ["frames", "patches", "reasoning"], seed=0)
    assert p["drop/frames"] == pytest.approx(8.0)  # 10 -> 2
    # a 32x32 frame has 4 patches of 16x16; 15% of 4 rounds half up to 1: a quarter of each
    # frame zeroed, mean 25 -> 18.75, score 10 -> 7.5
    assert p["drop/patches"] == pytest.approx(2.5)
    assert "drop/reasoning" not in p  # one sentence: nothing to jumble
    assert p["drop"] == pytest.approx((8.0 + 2.5) / 2)
