"""Online accuracy filtering (Reinforced Reasoning for Embodied Planning) on TRL.

A prompt group (its ``num_generations`` completions) is kept only if the fraction of its
completions with full accuracy lies in ``[lo, hi]`` (default [0.1, 0.9], inclusive):
groups that are all right or all wrong carry no learning signal. How we do it in TRL:
the accuracy reward function records each batch's values; after TRL scores a generation
batch we **zero the advantages of rejected groups** (a subclass of ``GRPOTrainer``
overriding ``_generate_and_score_completions``), so they add nothing to the loss, and log
``online_filter/kept_frac``. Not done: the paper's buffer that refills rejected groups
before an optimisation step — each step here trains on the kept groups only
(:class:`groundrl.curate.online_filter.OnlineFilterBuffer` holds the buffer logic, not yet
wired into TRL's loop).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groundrl.curate.online_filter import group_keep_mask


class AccuracyRecorder:
    """Wraps a TRL reward function and remembers the values of the last batch."""

    def __init__(self, func: Callable[..., list[Any]]) -> None:
        self.func = func
        self.__name__ = getattr(func, "__name__", "accuracy")
        self.last: list[float | None] = []

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        out = self.func(*args, **kwargs)
        self.last = list(out)
        return out


def filtering_trainer_class(lo: float = 0.1, hi: float = 0.9):
    """A ``GRPOTrainer`` subclass applying the filter; give it an :class:`AccuracyRecorder`
    as ``accuracy_recorder``."""
    from trl import GRPOTrainer

    class OnlineFilterGRPOTrainer(GRPOTrainer):
        def __init__(self, *args: Any, accuracy_recorder: AccuracyRecorder, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.accuracy_recorder = accuracy_recorder
            self.filter_seen = 0
            self.filter_kept = 0

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            acc = self.accuracy_recorder.last
            adv = out["advantages"]
            if len(acc) == adv.shape[0]:
                keep = group_keep_mask(
                    [a if a is not None else 0.0 for a in acc], self.num_generations, lo, hi
                )
                mask = adv.new_tensor([1.0 if k else 0.0 for k in keep])
                out["advantages"] = adv * (mask.unsqueeze(-1) if adv.dim() > 1 else mask)
                groups = len(keep) // self.num_generations
                kept = sum(keep) // self.num_generations
                self.filter_seen += groups
                self.filter_kept += kept
                mode = "train" if self.model.training else "eval"
                self._metrics[mode]["online_filter/kept_frac"].append(kept / groups if groups else 0.0)
            return out

    return OnlineFilterGRPOTrainer
