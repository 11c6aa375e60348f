"""EQA-RM's contrastive GRPO (C-GRPO) on TRL.

Each training instance is expanded into four rows: the original context and three
perturbed ones — frames shuffled in time (``temporal``), 15% of 16×16 patches zeroed in
every frame (``spatial``), reasoning steps shuffled (``reasoning``) — all seeded. The
reward model is prompted with each; its accuracy reward ``max(0, 1 − (|s − s*|/10)²)``
is computed on every row, and the **per-type batch means** decide the contrastive boost
(:func:`groundrl.rewards.critique_score.contrastive_boost`) each *original* evaluation gets:
``mu`` when ``mean(orig) ≥ delta · mean(perturbed)`` and its own accuracy ≥ ``min_acc``.
The ``contrastive`` reward function returns the averaged boost for original rows and
``None`` (not applicable) for perturbed ones; it sits beside the recipe's accuracy and
format parts (weight 1), so ``total = accuracy + format + boost`` as in the paper.

Training (:mod:`groundrl.train.cgrpo_trainer`) does not put perturbed copies in the data
set: TRL's sampler shuffles rows, so copies would land in other batches. Instead every
generation batch of originals is expanded in the trainer (:func:`perturb_row`: each
perturbed row gets its *own* prompt text and images, which is what the processor
encodes), so an instance and all its copies are generated, scored and contrasted
together. :class:`CGRPOConfig` is the ``cgrpo:`` block of a ``cgrpo`` stage.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from groundrl.augment import mask_patches, shuffle_frames, shuffle_reasoning
from groundrl.integrations.common import completion_text
from groundrl.rewards.critique_score import combine_boosts, contrastive_boost, eqa_accuracy
from groundrl.settings import parse_settings
from groundrl.train.rm_data import eqa_rm_messages

PERTURBATIONS = ("temporal", "spatial", "reasoning")


class ContrastiveState(TypedDict, total=False):
    """The latest call of :func:`contrastive_reward` (``.last``; empty before the first)."""

    boosts: dict[str, list[float]]  # per perturbation type, per original row [EQA-RM Eq. 4]
    metrics: dict[str, float]  # what it logged
    accuracies: list[float]  # per row
    kinds: list[str]  # per row: none or the perturbation type
    out: list[float | None]  # the rewards returned


def expand(
    record: Mapping[str, Any], rng: random.Random, types: Sequence[str] = PERTURBATIONS
) -> list[dict[str, Any]]:
    """One instance (``frames``: list of images, ``reasoning``: text, …) → the original row
    plus one row per perturbation type, each tagged with ``perturbation``."""
    rows = [{**record, "perturbation": "none"}]
    frames = list(record.get("frames") or [])
    for t in types:
        row = {**record, "perturbation": t}
        if t == "temporal":
            row["frames"] = shuffle_frames(frames, rng)[0]
        elif t == "spatial":
            row["frames"] = [mask_patches(f, rng, ratio=0.15, patch=16)[0] for f in frames]
        elif t == "reasoning":
            row["reasoning"] = shuffle_reasoning(str(record.get("reasoning", "")), rng)
        else:
            raise ValueError(f"unknown perturbation {t!r}; choose from {PERTURBATIONS}")
        rows.append(row)
    return rows


@dataclass(frozen=True)
class CGRPOConfig:
    """The ``cgrpo:`` block of a ``cgrpo`` stage.

    * ``types``: the active perturbations (the paper's ablation switches one off);
    * ``delta`` 0.95, ``mu`` 0.3, ``min_acc`` 0.1: Eq. 4's constants (EQA-RM §3.3);
    * ``mask_ratio`` 0.15, ``patch`` 16: the spatial perturbation (EQA-RM §3.3);
    * ``train_perturbed`` (default ``False``): whether perturbed evaluations also enter
      the policy loss. Off by default: in the paper they exist to measure the contrast;
      training on them would teach the model to score corrupted inputs as if they were
      the real episode (their gold score is the original's), the opposite of what the
      boost rewards;
    * ``seed``: perturbations are drawn from ``Random(f"{seed}:{step}:{id}:{type}")``.
    """

    types: tuple[str, ...] = PERTURBATIONS
    delta: float = 0.95
    mu: float = 0.3
    min_acc: float = 0.1
    mask_ratio: float = 0.15
    patch: int = 16
    train_perturbed: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        types = tuple(self.types)
        bad = [t for t in types if t not in PERTURBATIONS]
        if bad or len(set(types)) != len(types):
            raise ValueError(
                f"cgrpo.types: each of {', '.join(PERTURBATIONS)} at most once, got {list(types)}"
            )
        object.__setattr__(self, "types", tuple(t for t in PERTURBATIONS if t in types))
        contrastive_boost([1.0], [1.0], self.delta, self.mu, self.min_acc)  # validates the constants
        if not 0 <= self.mask_ratio <= 1:
            raise ValueError(f"cgrpo.mask_ratio must be in [0, 1] (paper: 0.15), got {self.mask_ratio!r}")

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> CGRPOConfig:
        if isinstance(raw, Mapping) and raw.get("types") is None and "types" in raw:
            raw = {**raw, "types": ()}  # `types:` left empty: no perturbation (plain GRPO)
        return parse_settings(cls, raw, "cgrpo")


def _with_reasoning(row: Mapping[str, Any], new: str) -> list[dict[str, Any]]:
    """The row's chat prompt rebuilt with another reasoning trace: by the EQA-RM prompt
    builder when the row has its fields, else by replacing the old trace in the text."""
    if all(isinstance(row.get(k), str) for k in ("question", "answer")) and "images" in row:
        return eqa_rm_messages(row["question"], new, row["answer"], len(row.get("images") or []))
    old = str(row.get("reasoning", ""))
    out = []
    for m in row["prompt"]:
        c = m["content"]
        if isinstance(c, str):
            c = c.replace(old, new)
        else:
            c = [{**p, "text": p["text"].replace(old, new)} if p.get("type") == "text" else p for p in c]
        out.append({**m, "content": c})
    return out


def perturb_row(
    row: Mapping[str, Any], kind: str, rng: random.Random, cfg: CGRPOConfig | None = None
) -> dict[str, Any]:
    """A training row (chat ``prompt``, ``images``, ``reasoning`` …) with one
    perturbation applied to what the model will see: ``temporal`` reorders ``images``,
    ``spatial`` zeroes ``mask_ratio`` of the 16×16 patches of every image, ``reasoning``
    shuffles the steps of ``reasoning`` and rebuilds the prompt text from it."""
    cfg = cfg or CGRPOConfig()
    out = {**row, "perturbation": kind}
    images = list(row.get("images") or [])
    if kind == "temporal":
        out["images"] = shuffle_frames(images, rng)[0]
    elif kind == "spatial":
        out["images"] = [mask_patches(im, rng, ratio=cfg.mask_ratio, patch=cfg.patch)[0] for im in images]
    elif kind == "reasoning":
        new = shuffle_reasoning(str(row.get("reasoning", "")), rng)
        out["reasoning"] = new
        out["prompt"] = _with_reasoning(row, new)
    else:
        raise ValueError(f"unknown perturbation {kind!r}; choose from {PERTURBATIONS}")
    return out


def _acc(completion: Any, gt: Any) -> float:
    # the same accuracy (and the same handling of bad or out-of-range gold) as the recipe
    return eqa_accuracy(completion_text(completion), gt).value or 0.0


def contrastive_reward(delta: float = 0.95, mu: float = 0.3, min_acc: float = 0.1):
    """A TRL reward function computing the C-GRPO boost over the batch (see module doc).

    With TRL's ``log_metric`` it logs, per call (one generation batch):
    ``cgrpo/accuracy/original`` and, for each perturbation type present in the batch,
    ``cgrpo/accuracy/<type>`` (mean accuracy of its rows) and ``cgrpo/boost_rate/<type>``
    (the fraction of original rows that type boosts). A type with no rows in the batch
    (switched off) logs nothing. ``last`` holds the latest call's per-type boosts."""
    contrastive_boost([1.0], [1.0], delta, mu, min_acc)  # validate the constants now
    state: ContrastiveState = {}

    def contrastive(
        prompts=None, completions=None, perturbation=None, gt_score=None, log_metric=None, **kwargs
    ) -> list[float | None]:
        n = len(completions)
        kinds = perturbation or ["none"] * n
        golds = gt_score or [None] * n
        accs = [_acc(c, g) for c, g in zip(completions, golds, strict=True)]
        orig = [i for i in range(n) if kinds[i] == "none"]
        orig_acc = [accs[i] for i in orig]
        boosts = {}
        metrics: dict[str, float] = {}
        if orig:
            metrics["cgrpo/accuracy/original"] = sum(orig_acc) / len(orig_acc)
        for t in [t for t in PERTURBATIONS if t in kinds] + sorted(set(kinds) - {"none", *PERTURBATIONS}):
            pert = [accs[i] for i in range(n) if kinds[i] == t]
            boosts[t] = contrastive_boost(orig_acc, pert, delta, mu, min_acc)
            metrics[f"cgrpo/accuracy/{t}"] = sum(pert) / len(pert)
            if orig:
                metrics[f"cgrpo/boost_rate/{t}"] = sum(b > 0 for b in boosts[t]) / len(orig)
        combined = combine_boosts(boosts) if boosts else [0.0] * len(orig)
        out: list[float | None] = [None] * n
        for j, i in enumerate(orig):
            out[i] = combined[j]
        state.update(
            {"boosts": boosts, "metrics": metrics, "accuracies": accs, "kinds": list(kinds), "out": out}
        )
        if callable(log_metric):
            for k, v in metrics.items():
                log_metric(k, v)
        return out

    contrastive.last = state  # type: ignore[attr-defined]
    return contrastive
