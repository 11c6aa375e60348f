"""Stop a run whose loss or weights stop being numbers (issue 42 item 3).

:func:`finite_guard_callback` is a ``TrainerCallback`` that every ``groundrl train`` stage
gets. At each log (every step under the house ``logging_steps: 1``) it checks the logged
``loss`` and ``grad_norm`` and then every weight of the model; at the end of training it
checks the weights once more, before the model could be saved. The first value that is
NaN or ±inf raises :class:`NonFiniteTraining` naming the stage, the step and what went
bad, so ``trainer.train()`` ends, no ``final/`` is written, and the CLI exits non-zero
with that message.

Weights are checked, not only the loss, because transformers' ``logging_nan_inf_filter``
(on by default) logs a NaN step's loss as the running mean, and without clipping a NaN
gradient is never logged [ours]. The check is one ``isfinite`` pass over the weights,
about the cost of reading them once.
"""

from __future__ import annotations

import math
from typing import Any

CHECKED_LOGS = ("loss", "grad_norm")


class NonFiniteTraining(ValueError):
    """The loss, the gradient norm or a weight became NaN or infinite; nothing was saved."""


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return True  # not a number (a string): not this guard's business


CHUNK = 1 << 24  # elements checked at once: isfinite's bool copy stays ≤ 16 MB per step [ours]


def _all_finite(torch: Any, p: Any) -> Any:
    """A 0-d bool tensor on ``p``'s device, without a bool copy of a whole embedding."""
    flat = p.detach().reshape(-1)
    if flat.numel() <= CHUNK:
        return torch.isfinite(flat).all()
    return torch.stack([torch.isfinite(c).all() for c in flat.split(CHUNK)]).all()


def first_non_finite_weight(model: Any) -> str | None:
    """The name of the first parameter holding a NaN or ±inf, or ``None`` (one device
    sync for the whole model; an empty shard, as ZeRO-3 leaves, is finite). Under
    ``torch.distributed`` the verdict is agreed by every process (one all-reduce), so all
    of them stop together even when only one holds the bad shard."""
    # lazy: torch loads only when a model runs
    import torch

    params = [(n, p) for n, p in model.named_parameters() if p.numel()]
    flags = [_all_finite(torch, p) for _, p in params]
    local = not all(bool(f) for f in torch.stack(flags).tolist()) if flags else False
    bad = local
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        device = params[0][1].device if params and dist.get_backend() == "nccl" else "cpu"
        flag = torch.tensor([1.0 if local else 0.0], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        bad = bool(flag.item() > 0)
    if not bad:
        return None
    if not local:
        return "held by another process"
    return next(n for (n, _), f in zip(params, flags, strict=True) if not bool(f))


def finite_guard_callback(stage: str) -> Any:
    """The ``TrainerCallback`` described in the module doc, for stage ``stage``."""
    # lazy: transformers loads only when a model or trainer is built
    from transformers import TrainerCallback

    def fail(step: int, what: str) -> NonFiniteTraining:
        return NonFiniteTraining(
            f"stage {stage}: {what} at step {step}; training stopped and the model was not saved "
            "(lower learning_rate, set max_grad_norm, or check the rewards)"
        )

    def check_weights(model: Any, step: int) -> None:
        bad = first_non_finite_weight(model) if model is not None else None
        if bad is not None:
            raise fail(step, f"weight {bad} is not finite")

    class FiniteGuard(TrainerCallback):
        def on_log(self, args, state, control, logs=None, model=None, **kwargs):  # noqa: ANN001
            for key in CHECKED_LOGS:
                if logs and key in logs and not _finite(logs[key]):
                    raise fail(state.global_step, f"{key} is {logs[key]}")
            check_weights(model, state.global_step)

        def on_train_end(self, args, state, control, model=None, **kwargs):  # noqa: ANN001
            check_weights(model, state.global_step)

    return FiniteGuard()
