"""``Monitor``: per step, the signals of :mod:`groundrl.monitor.signals` over a sliding
window of samples, each signal's baseline (its first ``baseline_steps`` values), and the
alarms that fire when a signal leaves its threshold.

One object serves every surface: the TRL callback feeds it TRL's per-sample logs, the
offline command the rows of a samples file, verl / OpenRLHF users the dicts their
``compute_score`` / ``reward_func`` returned (:func:`groundrl.monitor.rows.rows_from_scores`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from groundrl.monitor import signals as sg
from groundrl.monitor.config import MonitorConfig
from groundrl.monitor.probes import ProbeExample

PREFIX = "monitor/"
VARYING = "/groups_varying"  # rewards/<part>/groups_varying (train.group_variation)


class Example(TypedDict, total=False):
    """A sample shown with an alarm (``step`` / ``reward`` / ``truth`` when the row has
    them); ``completion`` cut to 400 characters."""

    step: object
    reward: object
    truth: object
    completion: str


class AlarmRecord(TypedDict):
    """:meth:`Alarm.to_dict`: an alarm as the log and the report carry it."""

    name: str
    step: int
    value: float
    threshold: float
    baseline: float | None
    detail: str
    examples: list[Example] | list[ProbeExample]


@dataclass
class Alarm:
    name: str
    step: int
    value: float
    threshold: float
    baseline: float | None = None
    detail: str = ""
    examples: list[Example] | list[ProbeExample] = field(default_factory=list)

    def to_dict(self) -> AlarmRecord:
        return {
            "name": self.name,
            "step": self.step,
            "value": round(self.value, 6),
            "threshold": self.threshold,
            "baseline": None if self.baseline is None else round(self.baseline, 6),
            "detail": self.detail,
            "examples": self.examples,
        }


def example(row: Mapping[str, object], chars: int = 400) -> Example:
    text = str(row.get("completion") or "")
    out: Example = {}
    step, reward, truth = row.get("step"), row.get("reward"), row.get("truth")
    if step is not None:
        out["step"] = step
    if reward is not None:
        out["reward"] = reward
    if truth is not None:
        out["truth"] = truth
    out["completion"] = text if len(text) <= chars else text[:chars] + "…"
    return out


class Monitor:
    """Feed it with :meth:`observe` once per training step (and :meth:`observe_probe`
    after each probe run); read :attr:`fired` for every alarm so far."""

    def __init__(
        self,
        config: MonitorConfig,
        reference_texts: Iterable[Any] | None = None,
        part_weights: Mapping[str, float] | None = None,
    ) -> None:
        self.config = config
        # reward part -> weight in the total: a weight-0 part is a metric, never "constant"
        self.part_weights = dict(part_weights or {})
        self.constant_steps: dict[str, int] = {}  # part -> steps in a row it varied in no group
        self.window: deque[list[dict[str, object]]] = deque(maxlen=config.window)  # rows + step
        self.history: dict[str, list[float]] = {}  # signal -> its values so far (for baselines)
        self.fired: dict[str, Alarm] = {}
        self.statistics: dict[str, list[tuple[int, float]]] = {}  # alarm -> (step, statistic)
        self.kl_history: list[float] = []
        self.steps_seen = 0
        self.reference = sg.document_frequency(reference_texts) if reference_texts is not None else None
        self._early: list[str] = []  # the first steps' completions: the fallback reference

    # -- baselines -------------------------------------------------------------
    def baseline(self, name: str) -> float | None:
        vals = self.history.get(name, [])[: self.config.baseline_steps]
        return sum(vals) / len(vals) if len(vals) == self.config.baseline_steps else None

    def _record(self, name: str, value: float | None) -> None:
        if value is not None:
            self.history.setdefault(name, []).append(value)

    # -- per step --------------------------------------------------------------
    def observe(
        self, step: int, samples: Sequence[Mapping[str, Any]], metrics: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Add one step's samples; returns the ``monitor/*`` values of this step and
        ``alarms``: the alarms that fired for the first time at this step (as dicts)."""
        rows: list[dict[str, object]] = [dict(r, step=step) for r in samples]
        for r in rows:  # groups are per step
            if r.get("group") is not None:
                r["group"] = (step, r["group"])
        self.window.append(rows)
        self.steps_seen += 1
        if self.steps_seen <= self.config.baseline_steps:
            self._early.extend(str(r.get("completion") or "") for r in rows)
        win = [r for rs in self.window for r in rs]
        self._count_constant_parts(metrics or {})
        values = self._signals(win, metrics or {})
        for k, v in values.items():
            if not isinstance(v, str):
                self._record(k, v)
        new = self._check(step, values, win) if len(win) >= self.config.min_samples else []
        out: dict[str, Any] = {PREFIX + k: v for k, v in values.items() if v is not None}
        out[PREFIX + "alarms_fired"] = float(len(self.fired))
        out["alarms"] = [a.to_dict() for a in new]
        return out

    def _count_constant_parts(self, metrics: Mapping[str, Any]) -> None:
        """Streaks of steps in which a weighted part varied in no GRPO group, read from the
        ``rewards/<part>/groups_varying`` metric (train.group_variation adds it to the log
        row): a GRPO advantage is relative to its group, so such a part adds no gradient."""
        for key, value in metrics.items():
            if not (isinstance(key, str) and key.startswith("rewards/") and key.endswith(VARYING)):
                continue
            part, share = key[len("rewards/") : -len(VARYING)], sg.num(value)
            if share is None or self.part_weights.get(part, 1.0) == 0:
                continue
            self.constant_steps[part] = self.constant_steps.get(part, 0) + 1 if share == 0 else 0

    def _signals(
        self, win: list[dict[str, object]], metrics: Mapping[str, Any]
    ) -> dict[str, float | str | None]:
        c = self.config
        enough = len(win) >= c.min_samples
        v: dict[str, float | str | None] = {
            "reward_mean": sg.mean(sg.num(r.get("reward")) for r in win),
            "truth_mean": sg.mean(sg.num(r.get("truth")) for r in win),
            "length_mean": sg.mean(float(sg.length(r.get("completion"))) for r in win),
            "repetition": sg.mean(sg.repetition(r.get("completion")) for r in win),
            "format_mean": sg.mean(sg.num(r.get("format")) for r in win),
            "accuracy_mean": sg.mean(sg.num(r.get("accuracy", r.get("truth"))) for r in win),
            "zero_std_groups": sg.zero_std_groups(win),
        }
        v["truth_spearman"] = self._truth_spearman(win)
        v["hack_share"] = sg.hack_share(win, c.high_reward, c.truth_pass)
        if not enough:
            v = {k: None for k in v}
        reference = self.reference
        if reference is None and self.steps_seen > c.baseline_steps:
            reference = sg.document_frequency(self._early)
        if enough and reference is not None:
            tok, gap = sg.shortcut_token(win, reference, c.high_reward, min_high=c.min_high_samples)
            v["shortcut_token_gap"] = gap
            if tok is not None:
                v["shortcut_token"] = tok
        if self.constant_steps:
            v["constant_part_steps"] = float(max(self.constant_steps.values()))
        kl = sg.num(metrics.get("kl"))
        if kl is not None:
            v["kl"] = kl
            v["kl_jump"] = sg.kl_jump(self.kl_history[-c.window :], kl)
            self.kl_history.append(kl)
        return v

    def _truth_spearman(self, win: list[dict[str, object]]) -> float | None:
        """Spearman(reward, truth), only with at least ``min_truth_each`` passed and failed
        samples in the window (a correlation over 3 successes is noise)."""
        truth = [sg.num(r.get("truth")) for r in win]
        passed = sum(t is not None and t >= self.config.truth_pass for t in truth)
        failed = sum(t is not None and t < self.config.truth_pass for t in truth)
        if min(passed, failed) < self.config.min_truth_each:
            return None
        return sg.spearman([r.get("reward") for r in win], truth)

    # -- alarms ----------------------------------------------------------------
    def _check(self, step: int, v: Mapping[str, Any], win: list[dict[str, object]]) -> list[Alarm]:
        c, th = self.config, self.config.thresholds
        if self.steps_seen <= c.baseline_steps:
            return []
        base = self.baseline
        candidates: list[tuple[str, float | None, float | None, str]] = []

        def rise(name: str, signal: str, sign: float = 1.0) -> None:
            now, b = v.get(signal), base(signal)
            val = None if now is None or b is None else sign * (now - b)
            candidates.append((name, val, b, f"{signal} {_f(now)} vs baseline {_f(b)}"))

        rise("truth_corr_drop", "truth_spearman", -1.0)
        rise("hack_share_rise", "hack_share")
        rise("repetition_rise", "repetition")
        lb = base("length_mean")
        ln = v.get("length_mean")
        growth = ln / lb if ln is not None and lb else None
        candidates.append(("length_growth", growth, lb, f"mean length {_f(ln)} words vs baseline {_f(lb)}"))
        gap = sg.slope_gap(
            v.get("format_mean"), base("format_mean"), v.get("accuracy_mean"), base("accuracy_mean")
        )
        candidates.append(
            (
                "format_over_accuracy",
                gap,
                None,
                f"format {_f(v.get('format_mean'))}, accuracy {_f(v.get('accuracy_mean'))}",
            )
        )
        candidates.append(("zero_std_groups", v.get("zero_std_groups"), None, "groups with equal rewards"))
        tok = v.get("shortcut_token")
        candidates.append(("shortcut_token", v.get("shortcut_token_gap"), None, f"token {tok!r}"))
        candidates.append(("kl_jump", v.get("kl_jump"), None, f"kl {_f(v.get('kl'))}"))
        candidates.append(self._constant_part_candidate(v))
        new = []
        for name, val, b, detail in candidates:
            if val is not None:  # each alarm's statistic, for measuring headroom on a clean run
                self.statistics.setdefault(name, []).append((step, val))
            if name in self.fired or val is None or val < th[name]:
                continue
            alarm = Alarm(name, step, float(val), th[name], b, detail, self._examples(name, win, tok))
            self.fired[name] = alarm
            new.append(alarm)
        return new

    def _constant_part_candidate(self, v: Mapping[str, Any]) -> tuple[str, float | None, None, str]:
        """``constant_reward_part``: the longest streak in windows (1.0 = a whole window)."""
        steps = v.get("constant_part_steps")
        if steps is None:
            return ("constant_reward_part", None, None, "")
        names = sorted(p for p, n in self.constant_steps.items() if n == steps)
        detail = (
            f"reward part(s) {', '.join(names)} constant within every group for {int(steps)} steps: "
            "they contribute no gradient (a GRPO advantage is relative to its group)"
        )
        return ("constant_reward_part", steps / self.config.window, None, detail)

    def _examples(self, name: str, win: list[dict[str, object]], tok: Any) -> list[Example]:
        c = self.config
        rows = [r for r in win if r.get("step") == win[-1].get("step")] or win
        if name == "hack_share_rise" or name == "truth_corr_drop":
            pick = [
                r
                for r in rows
                if (a := sg.num(r.get("reward"))) is not None
                and (b := sg.num(r.get("truth"))) is not None
                and a >= c.high_reward
                and b < c.truth_pass
            ]
        elif name == "shortcut_token":
            pick = [
                r
                for r in rows
                if tok in sg.tokens(r.get("completion")) and (sg.num(r.get("reward")) or 0) >= c.high_reward
            ]
        elif name == "length_growth":
            pick = sorted(rows, key=lambda r: -sg.length(r.get("completion")))
        elif name == "repetition_rise":
            pick = sorted(rows, key=lambda r: -sg.repetition(r.get("completion")))
        else:
            pick = sorted(rows, key=lambda r: -(sg.num(r.get("reward")) or 0.0))
        return [example(r) for r in pick[: c.examples]]

    # -- judge health ----------------------------------------------------------
    def observe_probe(self, step: int, probe: Mapping[str, Any]) -> dict[str, Any]:
        """Add one probe run (:func:`groundrl.monitor.probes.run_probe`'s dict); returns
        its values as ``monitor/probe/*`` and the alarms that fired."""
        th = self.config.thresholds
        keys = ("drop", "failure_rate", "agreement", "swap_consistency")
        prior = {k: self.baseline("probe/" + k) for k in keys}
        for k in keys:
            self._record("probe/" + k, sg.num(probe.get(k)))
        drop, fail, agree, swap = (sg.num(probe.get(k)) for k in keys)
        checks: list[tuple[str, float | None, float | None, str]] = [
            ("probe_failure_rate", fail, None, "share of probe items the judge failed to score"),
        ]
        if drop is not None and prior["drop"] is not None and prior["drop"] > 0:
            loss = 1.0 - drop / prior["drop"]  # how much of the baseline drop is gone
            checks.append(("probe_drop_loss", loss, prior["drop"], f"perturbation drop {_f(drop)}"))
        if agree is not None and prior["agreement"] is not None:
            checks.append(
                (
                    "probe_agreement_drop",
                    prior["agreement"] - agree,
                    prior["agreement"],
                    f"agreement {_f(agree)}",
                )
            )
        if swap is not None and prior["swap_consistency"] is not None:
            checks.append(
                (
                    "probe_swap_drop",
                    prior["swap_consistency"] - swap,
                    prior["swap_consistency"],
                    f"swap consistency {_f(swap)}",
                )
            )
        new = []
        for name, val, b, detail in checks:
            if name in self.fired or val is None or val < th[name]:
                continue
            alarm = Alarm(name, step, float(val), th[name], b, detail, list(probe.get("examples", []))[:3])
            self.fired[name] = alarm
            new.append(alarm)
        out: dict[str, Any] = {PREFIX + "probe/" + k: v for k, v in probe.items() if sg.num(v) is not None}
        out["alarms"] = [a.to_dict() for a in new]
        return out

    def first_steps(self) -> dict[str, int]:
        return {name: a.step for name, a in self.fired.items()}


def _f(x: Any) -> str:
    n = sg.num(x)
    return "n/a" if n is None else f"{n:.3g}"
