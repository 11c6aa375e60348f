"""Live training output and the no-signal alarm.

One line per stage that says what training is doing: the step out of the total, the
time per step and an ETA, and the few numbers that matter (reward, accuracy or success,
the online filter's kept fraction, loss). On a terminal the line is rewritten in place;
off a terminal (logs, CI) it is printed every ``every`` steps and at the end. TRL's raw
dicts go only to ``log.jsonl``.

The same callback watches for steps that cannot teach anything and says so as soon as
they happen and again when the stage ends:

* ``zero_gradient`` — the gradient norm was 0 (nothing was learned from the step);
* ``constant_reward`` — every prompt group's rewards were equal (TRL's
  ``frac_reward_zero_std`` = 1, or ``reward_std`` = 0): every GRPO advantage is 0;
* ``all_filtered`` — the online filter kept no group (``online_filter/empty_steps`` = 1);
* ``judge_failing`` — more than ``judge_threshold`` of a judge's calls failed
  (``judge/<name>/failed_frac``);
* a weighted reward part that was constant within every group on every step
  (``rewards/<part>/groups_varying`` = 0, :mod:`groundrl.train.group_variation`): it
  contributed no gradient, whatever its weight (said at the end and in the report).

:meth:`ProgressWatch.summary` gives the stage's notes for ``report.md``; a stage in which
*no* step had a gradient gets ``no learning signal`` with the likely cause, which the
report puts in its first lines.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

SIGNALS = ("zero_gradient", "constant_reward", "all_filtered", "judge_failing")
VARYING = "/groups_varying"  # rewards/<part>/groups_varying (train.group_variation)

CAUSES = {
    "all_filtered": "the online filter kept no prompt group (accuracy outside [lo, hi] in every group)",
    "constant_reward": "every completion of each group got the same reward, so every GRPO advantage is 0",
    "zero_gradient": "the gradient norm was 0",
    "judge_failing": "the judge failed on most calls (its part scores its fallback)",
}
TINY_HINT = (
    "the tiny random model never writes a correct or well-formed answer, so its rewards are constant; "
    "to see learning, start from an SFT checkpoint (see `groundrl demo`) or use a real model"
)
# the same run after an earlier stage trained the tiny model (issue 39: the hint above told
# such a run to start from an SFT checkpoint, which it did)
TINY_TRAINED_HINT = (
    "the tiny model, though stage {stage} trained it first, still gets the same reward for every "
    "completion of a group; give stage {stage} more to learn from (more epochs or data, as "
    "`groundrl demo` does) or use a real model"
)


def trained_before(stages: Sequence[Any], name: str) -> str | None:
    """The last stage before ``name`` that trains a model (the one stage ``name`` starts
    from; a stage without a trainer passes the model on), or ``None``."""
    names = [s.name for s in stages]
    earlier = stages[: names.index(name)] if name in names else []
    return next((s.name for s in reversed(earlier) if s.kind.trainer), None)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def headline(logs: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The few numbers worth a glance, in a fixed order, from one TRL log dict."""
    out: list[tuple[str, float]] = []
    picks = [("reward", "reward")]
    for key in logs:
        if (
            key.startswith("rewards/")
            and key.endswith("/mean")
            and any(w in key for w in ("accuracy", "success"))
        ):
            picks.append((key.split("/")[1], key))
            break
    picks += [("kept", "online_filter/kept_frac"), ("loss", "loss"), ("acc", "mean_token_accuracy")]
    for label, key in picks:
        n = _num(logs.get(key))
        if n is not None:
            out.append((label, n))
    return out


def signals(logs: Mapping[str, Any], judge_threshold: float = 0.5) -> list[str]:
    """The no-signal conditions one logged step shows (see the module doc)."""
    found = []
    if _num(logs.get("grad_norm")) == 0.0:
        found.append("zero_gradient")
    if _num(logs.get("frac_reward_zero_std")) == 1.0 or _num(logs.get("reward_std")) == 0.0:
        found.append("constant_reward")
    if _num(logs.get("online_filter/empty_steps")) == 1.0:
        found.append("all_filtered")
    for key, v in logs.items():
        n = _num(v)
        if (
            key.startswith("judge/")
            and key.endswith("/failed_frac")
            and n is not None
            and n > judge_threshold
        ):
            found.append("judge_failing")
            break
    return found


def _clock(seconds: float) -> str:
    s = int(max(0, seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class ProgressWatch:
    """The callback's state, kept apart from TRL so it can be tested on plain dicts."""

    def __init__(
        self,
        stage: str,
        echo: Callable[[str], None] = print,
        stream: TextIO | None = None,
        tiny: bool = False,
        every: int | None = None,
        judge_threshold: float = 0.5,
        trained_by: str | None = None,
    ) -> None:
        self.stage, self.echo, self.tiny = stage, echo, tiny
        self.trained_by = trained_by  # the earlier stage whose model this one starts from
        self.stream = stream if stream is not None else sys.stdout
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every
        self.judge_threshold = judge_threshold
        self.total = 0
        self.steps = 0  # logged training steps
        self.counts = dict.fromkeys(SIGNALS, 0)
        self.part_weights: dict[str, float] = {}  # a part of weight 0 is a metric: never flagged
        self.parts: dict[str, list[int]] = {}  # part -> [steps with a share, steps it varied]
        self.t0 = time.monotonic()
        self.last_line = ""

    def begin(self, total: int) -> None:
        self.total, self.t0 = max(0, int(total)), time.monotonic()
        if self.every is None:
            self.every = max(1, self.total // 20) if self.total else 10

    def line(self, step: int, logs: Mapping[str, Any], now: float | None = None) -> str:
        elapsed = (time.monotonic() if now is None else now) - self.t0
        rate = elapsed / step if step else 0.0
        parts = [f"[{self.stage}] step {step}/{self.total or '?'}"]
        if self.total:
            parts[0] += f" ({100 * step // self.total}%)"
        if step:
            parts.append(f"{rate:.1f} s/step")
            if self.total > step:
                parts.append(f"ETA {_clock(rate * (self.total - step))}")
        parts += [f"{k} {v:.3g}" for k, v in headline(logs)]
        return " · ".join(parts)

    def log(self, step: int, logs: Mapping[str, Any]) -> None:
        if "loss" not in logs and "reward" not in logs and "grad_norm" not in logs:
            return  # the end-of-training summary dict, or an eval row
        self.steps += 1
        self._count_parts(logs)
        for sig in signals(logs, self.judge_threshold):
            self.counts[sig] += 1
            if self.counts[sig] == 1:
                self._say(f"[{self.stage}] warning at step {step}: {CAUSES[sig]}")
        self.last_line = self.line(step, logs)
        if self.tty:
            self.stream.write("\r\033[K" + self.last_line)
            self.stream.flush()
        elif step % (self.every or 1) == 0 or step == self.total:
            self.echo(self.last_line)

    def _count_parts(self, logs: Mapping[str, Any]) -> None:
        for key, v in logs.items():
            n = _num(v)
            if n is not None and key.startswith("rewards/") and key.endswith(VARYING):
                rec = self.parts.setdefault(key[len("rewards/") : -len(VARYING)], [0, 0])
                rec[0] += 1
                rec[1] += n > 0

    def constant_parts(self) -> str | None:
        """A sentence naming the weighted parts constant within every group on every step
        (none while the whole stage had no signal: that message says more)."""
        names = [
            n
            for n, (seen, varied) in self.parts.items()
            if seen and not varied and self.part_weights.get(n, 1.0)
        ]
        if not names or self.no_signal():
            return None
        return (
            f"reward part(s) {', '.join(names)} constant within every group on all the steps they were "
            "logged: they contributed no gradient (a GRPO advantage is relative to the group)"
        )

    def _say(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
        self.echo(text)

    def end(self) -> None:
        if self.tty and self.last_line:
            self.stream.write("\n")
            self.stream.flush()
        msg = self.no_signal()
        if msg:
            self.echo(f"[{self.stage}] NO LEARNING SIGNAL: {msg}")
        parts = self.constant_parts()
        if parts:
            self.echo(f"[{self.stage}] warning: {parts}")

    def no_signal(self) -> str | None:
        """A sentence when no logged step of the stage had a gradient, else ``None``."""
        if not self.steps or self.counts["zero_gradient"] < self.steps:
            return None
        causes = [CAUSES[s] for s in ("all_filtered", "constant_reward", "judge_failing") if self.counts[s]]
        why = "; ".join(causes) if causes else CAUSES["zero_gradient"]
        msg = f"all {self.steps} steps had zero gradient ({why})"
        if not self.tiny:
            return msg
        hint = TINY_TRAINED_HINT.format(stage=self.trained_by) if self.trained_by else TINY_HINT
        return f"{msg}. Likely cause: {hint}"

    def summary(self) -> dict[str, str]:
        notes = {}
        msg = self.no_signal()
        if msg:
            notes["no learning signal"] = msg
        parts = self.constant_parts()
        if parts:
            notes["constant reward parts"] = parts
        seen = [f"{s.replace('_', ' ')} in {n} of {self.steps} steps" for s, n in self.counts.items() if n]
        if seen:
            notes["signal warnings"] = "; ".join(seen)
        return notes


def progress_callback(
    stage: str, echo: Callable[[str], None] = print, tiny: bool = False, trained_by: str | None = None
) -> Any:
    """A ``TrainerCallback`` driving a :class:`ProgressWatch`; ``.summary()`` for the report."""
    # lazy: transformers loads only when a model or trainer is built
    from transformers import TrainerCallback

    class Progress(TrainerCallback):
        def __init__(self) -> None:
            self.watch = ProgressWatch(stage, echo, tiny=tiny, trained_by=trained_by)

        def summary(self) -> dict[str, str]:
            return self.watch.summary()

        def on_train_begin(self, args, state, control, **kwargs):  # noqa: ANN001
            if state.is_world_process_zero:
                self.watch.begin(state.max_steps)

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            if state.is_world_process_zero and logs:
                self.watch.log(state.global_step, logs)

        def on_train_end(self, args, state, control, **kwargs):  # noqa: ANN001
            if state.is_world_process_zero:
                self.watch.end()

    return Progress()


def attach_progress(
    trainer: Any,
    stage: str,
    echo: Callable[[str], None] = print,
    tiny: bool = False,
    verbose: bool = False,
    trained_by: str | None = None,
) -> Any:
    """Replace TRL's tqdm bar and dict printer on ``trainer`` with the progress line
    (the printer stays with ``verbose``); returns the callback (``.summary()``).
    ``trained_by``: the earlier stage whose model this one starts from (the hint fits it)."""
    for cb in list(trainer.callback_handler.callbacks):
        name = type(cb).__name__
        if name == "ProgressCallback" or (name == "PrinterCallback" and not verbose):
            trainer.remove_callback(cb)
    cb = progress_callback(stage, echo, tiny=tiny, trained_by=trained_by)
    trainer.add_callback(cb)
    return cb
