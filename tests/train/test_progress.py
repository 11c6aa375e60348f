"""Live training output and the no-signal alarm (issue 29 items 1-2), on hand-made TRL log dicts."""

import io

from groundrl.train.progress import ProgressWatch, headline, signals


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def _grpo(step, reward=0.5, grad=0.3, **extra):
    return {"loss": 0.01 * step, "grad_norm": grad, "reward": reward, "reward_std": 0.2, **extra}


def test_off_a_terminal_one_short_line_every_n_steps():
    lines = []
    w = ProgressWatch("grpo", echo=lines.append, stream=io.StringIO())
    w.begin(total=40)  # every = 40 // 20 = 2
    for step in range(1, 41):
        w.log(step, _grpo(step, **{"rewards/accuracy/mean": 0.25}))
    assert len(lines) == 20
    assert lines[0].startswith("[grpo] step 2/40 (5%)")
    assert "reward 0.5" in lines[-1] and "accuracy 0.25" in lines[-1] and "loss 0.4" in lines[-1]
    assert lines[-1].startswith("[grpo] step 40/40 (100%)")
    assert all(len(line) < 160 for line in lines)  # no 800-character dicts


def test_on_a_terminal_the_line_is_rewritten_in_place():
    tty, lines = FakeTTY(), []
    w = ProgressWatch("sft", echo=lines.append, stream=tty)
    w.begin(total=3)
    for step in (1, 2, 3):
        w.log(step, {"loss": 1.0 / step, "grad_norm": 1.0, "mean_token_accuracy": 0.5})
    w.end()
    out = tty.getvalue()
    assert out.count("\r\033[K") == 3 and out.endswith("\n") and not lines
    assert "[sft] step 3/3 (100%)" in out and "acc 0.5" in out


def test_eta_from_the_time_per_step():
    w = ProgressWatch("grpo", stream=io.StringIO())
    w.begin(total=10)
    line = w.line(2, {"reward": 1.0}, now=w.t0 + 8.0)  # 4 s/step, 8 steps left: 32 s
    assert "4.0 s/step" in line and "ETA 0:32" in line


def test_signals_named_per_step():
    assert signals({"grad_norm": 0.0}) == ["zero_gradient"]
    assert signals({"frac_reward_zero_std": 1.0}) == ["constant_reward"]
    assert signals({"reward_std": 0.0, "online_filter/empty_steps": 1.0}) == [
        "constant_reward",
        "all_filtered",
    ]
    assert signals({"judge/grm/failed_frac": 0.75}) == ["judge_failing"]
    assert signals({"judge/grm/failed_frac": 0.25, "grad_norm": 0.1, "reward_std": 0.3}) == []


def test_a_stage_with_no_gradient_says_so_when_it_happens_and_at_the_end():
    lines = []
    w = ProgressWatch("grpo", echo=lines.append, stream=io.StringIO(), tiny=True)
    w.begin(total=4)
    for step in range(1, 5):
        w.log(step, _grpo(step, reward=0.0, grad=0.0, reward_std=0.0, **{"online_filter/empty_steps": 1.0}))
    w.end()
    warnings = [x for x in lines if "warning at step 1" in x]
    assert len(warnings) == 3  # zero gradient, constant reward, nothing kept: each said once, at step 1
    assert lines[-1].startswith("[grpo] NO LEARNING SIGNAL: all 4 steps had zero gradient")
    assert "online filter kept no prompt group" in lines[-1] and "tiny random model" in lines[-1]
    notes = w.summary()
    assert notes["no learning signal"].startswith("all 4 steps had zero gradient")
    assert "zero gradient in 4 of 4 steps" in notes["signal warnings"]


def test_one_step_with_a_gradient_is_not_a_silent_stage():
    w = ProgressWatch("grpo", echo=lambda s: None, stream=io.StringIO())
    w.begin(total=3)
    for step, grad in ((1, 0.0), (2, 0.5), (3, 0.0)):
        w.log(step, _grpo(step, grad=grad))
    assert w.no_signal() is None
    assert w.summary() == {"signal warnings": "zero gradient in 2 of 3 steps"}


def test_the_end_of_training_summary_dict_is_not_a_step():
    w = ProgressWatch("grpo", echo=lambda s: None, stream=io.StringIO())
    w.begin(total=1)
    w.log(1, {"train_runtime": 3.0, "train_loss": 0.1})
    assert w.steps == 0 and headline({"reward": 0.2, "rewards/success/mean": 0.5}) == [
        ("reward", 0.2),
        ("success", 0.5),
    ]
