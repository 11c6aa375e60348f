"""Which reward parts can move the policy: the share of GRPO groups in which each part varies.

GRPO normalises advantages within each prompt group, so a reward part whose value is the
same for every completion of a group adds nothing to that group's advantages, whatever
its weight — a batch-level term (EQA-RM's contrastive boost compares batch means), a gate
that always passes, a judge that always says yes. TRL logs each part's batch mean and
std, which do not show this: a part can vary across the batch and still be constant
inside every group. For every training step this logs

    ``rewards/<part>/groups_varying`` — the share of the latest generation batch's groups
    in which the part took more than one value (NaN / unscored values left out),

and :class:`~groundrl.train.progress.ProgressWatch` reports a weighted part that varied in
no group on any step of a stage: "constant within every group: contributes no gradient"
(issue 38). Pure function first; the callback reads the trainer's own per-completion log
(``_logs["rewards"]``, the data of TRL's completions table).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from groundrl.monitor.rows import trainer_weights

KEY = "rewards/{}/groups_varying"


def groups_varying(values: Sequence[Any], group_size: int, tol: float = 1e-9) -> float | None:
    """The share of consecutive groups of ``group_size`` whose finite values differ by
    more than ``tol``; ``None`` when no group has two finite values.

    >>> groups_varying([1, 1, 0, 1, 0.5, 0.5], 2)
    0.3333333333333333
    >>> groups_varying([float("nan"), 1.0], 2) is None
    True
    """
    if group_size < 2:
        return None
    seen = varied = 0
    for start in range(0, len(values) - group_size + 1, group_size):
        vals = [float(v) for v in values[start : start + group_size] if _finite(v)]
        if len(vals) < 2:
            continue
        seen += 1
        varied += max(vals) - min(vals) > tol
    return varied / seen if seen else None


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def part_variation(rewards: Mapping[str, Sequence[Any]], group_size: int) -> dict[str, float]:
    """``{"rewards/<part>/groups_varying": share}`` for every part with a defined share."""
    out = {}
    for name, vals in rewards.items():
        share = groups_varying(list(vals), group_size)
        if share is not None:
            out[KEY.format(name)] = share
    return out


def variation_callback(trainer: Any) -> Any:
    """A ``TrainerCallback`` that adds :func:`part_variation` of ``trainer``'s latest
    generation batch to every training log row (add it before the log writer: callbacks
    share the row)."""
    # lazy: transformers loads only when a trainer is built
    from transformers import TrainerCallback

    class GroupVariation(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            if logs is None or "loss" not in logs:
                return
            rewards = (getattr(trainer, "_logs", None) or {}).get("rewards") or {}
            g = int(getattr(trainer, "num_generations", 0) or 0)
            logs.update(part_variation(rewards, g))

    return GroupVariation()


def weighted_parts(trainer: Any) -> dict[str, float]:
    """``{part name: weight}`` of a TRL trainer's reward functions."""
    names = list(getattr(trainer, "reward_func_names", []) or [])
    return dict(zip(names, trainer_weights(trainer, len(names)), strict=False))
