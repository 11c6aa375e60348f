"""``GroundGRPOTrainer``: TRL's ``GRPOTrainer`` with the papers' per-sampling hooks.

* Step-GRPO (EmbodiedBrain): a :class:`~groundrl.train.step_grpo.StepHinter` draws the
  guided-precursor hint of every prompt group each time the group is generated;
* the online accuracy filter with a refill buffer (Reinforced Reasoning): kept groups
  fill a buffer of B groups, TRL takes n optimiser steps over it, then it is refilled —
  see :mod:`groundrl.train.online_filter`. ``buffers`` records each filled buffer.

Both act in ``_generate_and_score_completions`` (TRL 1.x), the one place that sees a
generation batch before and after scoring; everything else (loss, logging, vLLM, PEFT,
DeepSpeed) is TRL's. ``loss_rows`` counts the rows that reached ``_compute_loss``.

The class is defined at module level, so this module imports TRL and torch when it
loads; its importers (:func:`groundrl.train.builders.grpo_trainer`, and
:mod:`groundrl.train.cgrpo_trainer`, itself imported lazily) import it inside the
function that builds a trainer, so importing ``groundrl`` does not import TRL.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import torch
from trl import GRPOConfig, GRPOTrainer
from trl.trainer.utils import split_pixel_values_by_grid, unsplit_pixel_values_by_grid

from groundrl.curate.accuracy_filter import group_keep_mask
from groundrl.train.online_filter import (
    OnlineFilterConfig,
    check_group_layout,
    concat_rows,
    last_values,
    select_rows,
    steps_per_buffer,
)
from groundrl.train.step_grpo import StepHinter


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else 0.0


def _resolved(value: int | None, key: str) -> int:
    """TRL's ``GRPOConfig.__post_init__`` fills ``key``; None means arguments that skipped it."""
    if value is None:
        raise ValueError(
            f"grpo.{key} is unset: build the trainer's args with trl.GRPOConfig, which fills it in"
        )
    return value


@runtime_checkable
class _IndexedRows(Protocol):
    """A map-style data set (``datasets.Dataset``): the refill draws prompts by index."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> Mapping[str, Any]: ...


def _buffer_geometry(args: Any, cfg: OnlineFilterConfig) -> int:
    """Makes one TRL generation batch the paper's buffer: ``steps_per_generation`` =
    n × ``gradient_accumulation_steps`` so TRL takes n optimiser steps over each filled
    buffer [RR paper §3.3]. Returns n; raises ``ValueError`` naming the keys on a clash."""
    accum = int(args.gradient_accumulation_steps)
    n = steps_per_buffer(
        cfg, int(args.per_device_train_batch_size), accum, int(args.world_size), int(args.num_generations)
    )
    if args.steps_per_generation not in (accum, n * accum):
        raise ValueError(
            f"grpo.steps_per_generation = {args.steps_per_generation} conflicts with the online filter's buffer "
            f"({n} optimiser step(s) × gradient_accumulation_steps {accum}); leave steps_per_generation out and "
            "set online_filter.steps_per_buffer or buffer_groups instead"
        )
    args.steps_per_generation = n * accum
    args.generation_batch_size = int(args.per_device_train_batch_size) * int(args.world_size) * n * accum
    return n


class GroundGRPOTrainer(GRPOTrainer):
    args: GRPOConfig  # TRL passes its GRPOConfig; Trainer declares the TrainingArguments base

    def __init__(
        self,
        *args: Any,
        step_hinter: StepHinter | None = None,
        online_filter: OnlineFilterConfig | None = None,
        accuracy_recorder: Any = None,
        **kwargs: Any,
    ) -> None:
        self.steps_per_buffer = 1
        if online_filter is not None and kwargs.get("args") is not None:
            self.steps_per_buffer = _buffer_geometry(kwargs["args"], online_filter)
        super().__init__(*args, **kwargs)
        self.step_hinter = step_hinter
        self.online_filter = online_filter
        self.accuracy_recorder = accuracy_recorder
        self.loss_rows = 0
        self.buffers: list[dict[str, int]] = []  # per filled buffer: groups kept/generated, rows
        if online_filter is not None:
            if accuracy_recorder is None:
                raise ValueError("online_filter needs the accuracy reward function's recorder")
            if not isinstance(self.train_dataset, _IndexedRows):
                raise ValueError(
                    "online_filter refills its buffer with prompts drawn by index from train_dataset: "
                    f"give a map-style data set (datasets.Dataset), not {type(self.train_dataset).__name__}"
                )
            self._refill_rows: _IndexedRows = self.train_dataset
            check_group_layout(
                self.args.per_device_train_batch_size,
                _resolved(self.args.steps_per_generation, "steps_per_generation"),
                _resolved(self.num_generations, "num_generations"),
            )
            # each rank draws its own refill prompts (seed + rank)
            self._refill_rng = random.Random(online_filter.seed + 1_000_003 * self.accelerator.process_index)

    # -- Step-GRPO -------------------------------------------------------------------
    def _hint(self, inputs: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
        if self.step_hinter is None or mode != "train":
            return inputs
        rows, ks = self.step_hinter(inputs, _resolved(self.num_generations, "num_generations"))
        if ks:
            self._metrics[mode]["step_grpo/hinted_frac"].append(sum(k > 0 for k in ks) / len(ks))
            self._metrics[mode]["step_grpo/hint_steps_mean"].append(sum(ks) / len(ks))
        return rows

    def _generate_and_score_completions(self, inputs):
        mode = "train" if self.model is not None and self.model.training else "eval"
        if self.online_filter is None or mode != "train":
            return super()._generate_and_score_completions(self._hint(inputs, mode))
        return self._filtered_batch(inputs)

    # -- online filter with a refill buffer -------------------------------------------
    def _fresh_prompts(self, n_rows: int) -> list[dict[str, Any]]:
        g = _resolved(self.num_generations, "num_generations")
        ds = self._refill_rows
        idx = self._refill_rng.sample(range(len(ds)), min(len(ds), n_rows // g))
        while len(idx) < n_rows // g:  # a data set smaller than the batch: sample with replacement
            idx.append(self._refill_rng.randrange(len(ds)))
        return [dict(ds[i]) for i in idx for _ in range(g)]

    def _any_process(self, flag: bool) -> bool:
        t = torch.tensor([1.0 if flag else 0.0], device=self.accelerator.device)
        return bool(self.accelerator.gather(t).sum().item() > 0)

    def _filtered_batch(self, inputs):
        cfg = self.online_filter
        if cfg is None:
            raise RuntimeError("_filtered_batch runs only with an online_filter")
        g = _resolved(self.num_generations, "num_generations")
        target = len(inputs)
        kept: list[dict[str, Any]] = []  # per kept group: its rows of the generation output
        acc_all: list[float] = []
        acc_kept: list[list[float]] = []
        generated = rounds = 0
        last = None
        batch = inputs
        while True:
            out = super()._generate_and_score_completions(self._hint(batch, "train"))
            rounds += 1
            acc = last_values(self.accuracy_recorder)
            n = int(out["completion_ids"].shape[0])
            if len(acc) != n:
                raise RuntimeError(
                    f"online_filter: the reward {cfg.reward!r} gave {len(acc)} values for {n} completions"
                )
            out = split_pixel_values_by_grid(out)
            last = out
            keep = group_keep_mask(acc, g, cfg.lo, cfg.hi, cfg.full, cfg.criterion)
            acc_all += [_num(a) for a in acc]
            for start in range(0, n, g):
                generated += 1
                if keep[start]:
                    kept.append(select_rows(out, range(start, start + g)))
                    acc_kept.append([_num(a) for a in acc[start : start + g]])
            short = len(kept) * g < target
            if not self._any_process(short):
                break
            if rounds >= cfg.max_rounds:
                if cfg.when_exhausted == "error":
                    raise RuntimeError(
                        f"online_filter: {rounds} generation rounds kept {len(kept)} of {generated} prompt "
                        f"groups, short of the {target // g} a batch needs (accuracy in [{cfg.lo}, {cfg.hi}], "
                        f"criterion {cfg.criterion}); raise online_filter.max_rounds, widen lo/hi, or set "
                        "when_exhausted: repeat"
                    )
                break
            batch = self._fresh_prompts(target)
        need = target // g
        buffered = len(kept)
        empty = False
        if len(kept) >= need:
            chosen, chosen_acc = kept[:need], acc_kept[:need]
        elif kept:  # when_exhausted: repeat — cycle the kept groups
            chosen = [kept[i % len(kept)] for i in range(need)]
            chosen_acc = [acc_kept[i % len(kept)] for i in range(need)]
        else:  # nothing kept: a step that trains on nothing
            empty = True
            chosen = [select_rows(last, range(start, start + g)) for start in range(0, need * g, g)]
            chosen_acc = []
        res = concat_rows(chosen, pad_token_id=getattr(self, "pad_token_id", 0) or 0)
        if empty:
            res["advantages"] = torch.zeros_like(res["advantages"])
        mask = (
            res["completion_mask"]
            if res.get("tool_mask") is None
            else res["completion_mask"] * res["tool_mask"]
        )
        res["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
        res = unsplit_pixel_values_by_grid(res)
        m = self._metrics["train"]
        m["online_filter/kept_frac"].append(buffered / generated if generated else 0.0)
        m["online_filter/buffer_size"].append(float(buffered))
        m["online_filter/groups_generated"].append(float(generated))
        m["online_filter/steps_per_buffer"].append(float(self.steps_per_buffer))
        self.buffers.append(
            {"kept": buffered, "generated": generated, "rows": int(res["completion_ids"].shape[0])}
        )
        m["online_filter/empty_steps"].append(1.0 if empty else 0.0)
        m["rewards/accuracy_original/mean"].append(_mean(acc_all))
        flat = [a for grp in chosen_acc for a in grp]
        m["rewards/accuracy_filtered/mean"].append(_mean(flat))
        return res

    def _compute_loss(self, model, inputs):
        self.loss_rows += int(inputs["completion_ids"].shape[0])
        return super()._compute_loss(model, inputs)


def ground_grpo_trainer_class() -> type:
    """:class:`GroundGRPOTrainer`, kept as a function for the callers that import this
    module lazily (it imports TRL and torch)."""
    return GroundGRPOTrainer
