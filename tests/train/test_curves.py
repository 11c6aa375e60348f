"""``curves.png`` (issue 29 item 3): a few labelled panels, one colour per stage on a
shared integer step axis, plain numbers, and a note on every flat line."""

from __future__ import annotations

import json

from groundrl.train import curves, runlog

SFT = [
    {"stage": "sft", "step": i, "loss": 2.5 - 0.3 * i, "mean_token_accuracy": 0.3 + 0.1 * i}
    for i in (1, 2, 3)
]
GRPO = [
    {"stage": "grpo", "step": i, "loss": 0.0, "grad_norm": 0.0, "reward": 0.0, "reward_std": 0.0,
     "rewards/plan/mean": 0.0, "frac_reward_zero_std": 1.0, "entropy": 100.000001 + i * 1e-6,
     "online_filter/kept_frac": 0.0, "learning_rate": 1e-5, "completions/min_length": 3}
    for i in (1, 2)
]  # fmt: skip


def test_stages_follow_each_other_on_one_axis_with_their_own_colours():
    rows = SFT + [{"stage": "sft", "step": 3, "train_runtime": 1.0}] + GRPO
    assert curves.stage_offsets(rows) == {"sft": 0, "grpo": 3}
    assert curves.series(rows, "loss", curves.stage_offsets(rows)) == {
        "sft": [(1, 2.2), (2, 1.9), (3, 2.5 - 0.9)],
        "grpo": [(4, 0.0), (5, 0.0)],
    }
    colours = curves.stage_colours(["sft", "grpo", "grpo_again", "warmup"])
    assert colours["sft"] == curves.STAGE_COLOURS["sft"] and colours["grpo"] == curves.STAGE_COLOURS["grpo"]
    assert len(set(colours.values())) == 4  # a second GRPO stage gets a colour of its own


def test_panels_group_the_metrics_and_drop_the_noise():
    specs = {title: names for title, _, names, _ in curves.panels(SFT + GRPO)}
    assert list(specs) == [
        "reward (mean over completions)",
        "reward parts",
        "method mechanism",
        "loss",
        "gradient norm",
        "entropy of the policy",
    ]  # fmt: skip  (no KL panel: no kl was logged)
    assert specs["reward parts"] == ["rewards/plan/mean"]
    assert specs["method mechanism"] == [
        "mean_token_accuracy",
        "frac_reward_zero_std",
        "online_filter/kept_frac",
    ]
    every = {n for names in specs.values() for n in names}
    assert not every & {"learning_rate", "completions/min_length", "reward_std", "step", "epoch"}


def test_flat_lines_say_why():
    assert curves.flat_note("loss", [0.0, 0.0, 0.0], "loss").endswith("no gradient flowed (every group "
                                                                      "filtered, or every reward in a group equal)")  # fmt: skip
    assert "advantages were all 0" in curves.flat_note("f", [1.0, 1.0], "frac_reward_zero_std")
    assert "no completion earned it" in curves.flat_note("reward", [0, 0], "reward")
    assert "nothing was learned" in curves.flat_note("reward", [0.5, 0.5], "reward")
    assert curves.flat_note("loss", [0.0, 0.1], "loss") is None
    assert curves.flat_note("loss", [0.0], "loss") is None  # one step is not a line


def test_axes_use_integer_steps_and_plain_numbers(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    rows = SFT + GRPO
    offsets = curves.stage_offsets(rows)
    fig, ax = plt.subplots()
    spec = next(s for s in curves.panels(rows) if s[0] == "entropy of the policy")
    curves._draw_panel(ax, rows, offsets, curves.stage_colours(list(offsets)), spec)
    fig.canvas.draw()
    assert isinstance(ax.xaxis.get_major_locator(), MaxNLocator)
    assert all(float(t).is_integer() for t in ax.get_xticks())
    fmt = ax.yaxis.get_major_formatter()
    assert fmt.get_useOffset() is False and fmt.get_offset() == ""  # entropy 100.000002: no "+1e2"
    assert ax.get_ylabel() == "entropy (nats)" and ax.get_xlabel() == "training step"
    plt.close(fig)


def test_plot_curves_writes_the_figure_with_its_notes(tmp_path):
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SFT + GRPO))
    path = runlog.plot_curves(tmp_path)
    assert path == tmp_path / "curves.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
