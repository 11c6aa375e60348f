"""C-GRPO on TRL: perturbed copies built inside every generation batch.

The data set holds the original instances only (:func:`groundrl.train.rm_data.instance_row`).
TRL's sampler yields each instance ``G`` times in a row (one GRPO group); for every
generation batch :class:`CGRPOTrainer` appends, per instance and per active
perturbation, ``G`` rows whose prompt text / images are the perturbed ones
(:func:`groundrl.train.cgrpo.perturb_row`). TRL then tokenises and encodes each row from
its own ``prompt`` + ``images`` (so the model sees the perturbation), generates once for
the whole expanded batch, and calls the reward functions on all rows together: the
``contrastive`` reward therefore compares an instance's original evaluations with its own
perturbed ones, batch means over this batch only. Advantages are normalised per group of
``G`` rows — each group is one (instance, perturbation) — and then, unless
``cgrpo.train_perturbed``, the perturbed rows are dropped before the loss
(``loss_rows`` counts what reached it).

TRL's own ``reward`` / ``rewards/<part>/mean`` metrics average over every row of the
generation batch, perturbed ones included; the ``cgrpo/…`` metrics separate them.

Like :mod:`groundrl.train.trainer` this module imports TRL and torch when it loads;
its importers (``train.rm_stages``, the EQA-RM demo) import it inside a function.
"""

from __future__ import annotations

import random
from typing import Any

from trl.trainer.utils import split_pixel_values_by_grid, unsplit_pixel_values_by_grid

from groundrl.train.cgrpo import CGRPOConfig, perturb_row
from groundrl.train.online_filter import check_group_layout, select_rows
from groundrl.train.trainer import GroundGRPOTrainer, _resolved


class CGRPOTrainer(GroundGRPOTrainer):
    def __init__(self, *args: Any, cgrpo: CGRPOConfig | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # each rank perturbs and contrasts its own groups: refuse split groups before any
        # generation (on 8 processes the paper preset's batch split them: issue 35)
        check_group_layout(
            int(self.args.per_device_train_batch_size),
            int(self.args.steps_per_generation or self.args.gradient_accumulation_steps),
            _resolved(self.num_generations, "num_generations"),
            who="C-GRPO",
        )
        self.cgrpo = cgrpo or CGRPOConfig()
        self.last_expanded: list[dict[str, Any]] = []

    def expand_batch(self, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Originals first (as given), then per active type one group of ``G`` perturbed
        rows per instance, in the instances' order."""
        g = _resolved(self.num_generations, "num_generations")
        if len(inputs) % g:
            raise RuntimeError(f"C-GRPO: a generation batch of {len(inputs)} rows is not whole groups of {g}")
        groups = [inputs[s : s + g] for s in range(0, len(inputs), g)]
        for grp in groups:
            if len({str(r.get("id")) for r in grp}) != 1:
                raise RuntimeError("C-GRPO: a group mixes instances; rows must come G at a time")
        rows = [{**r, "perturbation": "none"} for r in inputs]
        step = int(self.state.global_step)
        for t in self.cgrpo.types:
            for grp in groups:
                rng = random.Random(f"{self.cgrpo.seed}:{step}:{grp[0].get('id')}:{t}")
                p = perturb_row(grp[0], t, rng, self.cgrpo)
                rows += [dict(p) for _ in range(g)]
        return rows

    def _generate_and_score_completions(self, inputs):
        mode = "train" if self.model is not None and self.model.training else "eval"
        if mode != "train" or not self.cgrpo.types:
            return super()._generate_and_score_completions(inputs)
        n = len(inputs)
        rows = self.expand_batch(list(inputs))
        self.last_expanded = rows
        out = super()._generate_and_score_completions(rows)
        if self.cgrpo.train_perturbed:
            return out
        out = select_rows(split_pixel_values_by_grid(out), range(n))
        mask = (
            out["completion_mask"]
            if out.get("tool_mask") is None
            else out["completion_mask"] * out["tool_mask"]
        )
        out["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
        return unsplit_pixel_values_by_grid(out)


def cgrpo_trainer_class() -> type:
    """:class:`CGRPOTrainer`, kept as a function for the callers that import this module
    lazily (it imports TRL and torch)."""
    return CGRPOTrainer
