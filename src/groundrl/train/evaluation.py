"""Evaluation during training: a stage's ``eval:`` block (issue 39 item 2).

::

    eval: {data: held_out.jsonl, every: 50, max_new_tokens: 256, limit: 200}

Every ``every`` optimiser steps (global steps ``every``, ``2·every``, …) the policy
answers each held-out prompt once, greedily (temperature 0, ``max_new_tokens``), and the
recipe's rubric scores the answers exactly as it scores training completions. The row
``{"stage", "step", "eval/reward", "eval/reward_ci_lo", "eval/reward_ci_hi", "eval/n",
"eval/<part>", …}`` goes to ``log.jsonl`` beside the training metrics, so ``report.md``
and ``curves.png`` show it. The interval is a 95% percentile bootstrap of the mean over
prompts (:func:`groundrl.intervals.bootstrap_ci`, 1000 resamples, seed 0) [ours: the
papers report held-out accuracy without intervals].

Choices where nothing is prescribed [ours]: greedy decoding (one answer per prompt, so
the number does not move with the sampling seed); ``max_new_tokens`` defaults to 128;
``limit`` takes the first n records; the held-out file has the training data's format
(``prompt``, optional ``images`` relative to the file, the recipe's fields). Every rank
generates the same answers (a ZeRO-3 model needs all ranks in ``generate``) and the main
process writes the row. Eval rows go to ``log.jsonl`` only, not to ``report_to`` trackers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groundrl.intervals import bootstrap_ci
from groundrl.io import iter_lines
from groundrl.settings import parse_settings

if TYPE_CHECKING:  # types only: the judges' backends load torch
    from groundrl.judges.base import ContentPart, Request

# the eval row's metrics: eval/reward, its CI, eval/n and eval/<part> (None: no value)
EvalMetrics = dict[str, float | None]


@dataclass(frozen=True)
class EvalConfig:
    data: str
    every: int
    max_new_tokens: int = 128
    limit: int | None = None
    batch_size: int = 8

    @classmethod
    def from_mapping(cls, raw: Any) -> EvalConfig | None:
        """The typed block; ``ValueError`` naming the key and what is allowed."""
        if raw is None:
            return None
        if isinstance(raw, Mapping):  # a null value is the default, as before
            raw = {k: v for k, v in raw.items() if v is not None}
            if "data" not in raw:
                raw = {**raw, "data": ""}  # said below with what to give
            if "every" not in raw:
                raise ValueError(
                    "eval.every must be given: evaluate every N optimiser steps (an integer ≥ 1)"
                )
        return parse_settings(cls, raw, "eval")

    def __post_init__(self) -> None:
        if not self.data:
            raise ValueError(
                "eval.data must be a JSONL file of held-out prompts (the training data's format)"
            )
        for key in ("every", "max_new_tokens", "limit", "batch_size"):
            v = getattr(self, key)
            if v is not None and v < 1:
                raise ValueError(f"eval.{key} must be an integer ≥ 1, got {v!r}")


def load_eval_records(cfg: EvalConfig) -> list[dict[str, object]]:
    """The held-out records (first ``limit``); images made absolute against the file."""
    base = Path(cfg.data).parent
    rows: list[dict[str, object]] = []  # the held-out JSON objects, passed on to the rubric
    for line in iter_lines(cfg.data):
        if line.problem or not isinstance(line.value.get("prompt"), str):
            raise ValueError(f"eval.data {cfg.data} line {line.number}: {line.problem or 'no text `prompt`'}")
        rec = dict(line.value)
        rec["images"] = [str(p if Path(p).is_absolute() else base / p) for p in rec.get("images") or []]
        rows.append(rec)
        if cfg.limit is not None and len(rows) >= cfg.limit:
            break
    if not rows:
        raise ValueError(f"eval.data {cfg.data}: no records")
    return rows


def _request(rec: Mapping[str, Any]) -> Request:
    """The judge backend's request: the images, then the prompt text."""
    content: list[ContentPart] = [{"type": "image", "image": p} for p in rec["images"]]
    content.append({"type": "text", "text": rec["prompt"]})
    return [{"role": "user", "content": content}]


def _sample(rec: Mapping[str, Any]) -> dict[str, object]:
    """The rubric's fields, as training's reward functions get them (``question`` = the
    prompt when the record has neither ``question`` nor ``task``: see ``grpo.load_rows``)."""
    sample: dict[str, object] = {k: v for k, v in rec.items() if k not in ("prompt", "images")}
    if "question" not in rec and "task" not in rec:
        sample["question"] = rec["prompt"]
    return sample


def summarize_eval(totals: Sequence[float], parts: Mapping[str, Sequence[float | None]]) -> EvalMetrics:
    """The eval row's metrics: mean total reward over prompts with its 95% bootstrap CI,
    ``n`` and each part's mean over the prompts it applied to (None when it applied to none).

    >>> summarize_eval([1.0, 1.0], {"format": [1.0, None]})
    {'eval/reward': 1.0, 'eval/reward_ci_lo': 1.0, 'eval/reward_ci_hi': 1.0, 'eval/n': 2, 'eval/format': 1.0}
    """
    n = len(totals)
    lo, hi = bootstrap_ci(list(totals), lambda xs: sum(xs) / len(xs))
    row: EvalMetrics = {
        "eval/reward": sum(totals) / n if n else None,
        "eval/reward_ci_lo": lo,
        "eval/reward_ci_hi": hi,
        "eval/n": n,
    }
    for name, vals in parts.items():
        got = [v for v in vals if v is not None and math.isfinite(v)]
        row[f"eval/{name}"] = sum(got) / len(got) if got else None
    return row


def evaluate(
    model: Any, processor: Any, rubric: Any, records: Sequence[Mapping[str, Any]], cfg: EvalConfig
) -> EvalMetrics:
    """Greedy answers of ``model`` to ``records``, scored by ``rubric``: the eval row's
    metrics (:func:`summarize_eval`). A prompt the model fails to answer scores as the
    empty completion (the rubric gives it its malformed-output value)."""
    # lazy: the judges' transformers backend loads torch
    from groundrl.judges.base import SamplingParams
    from groundrl.judges.transformers_backend import TransformersBackend

    tok = getattr(processor, "tokenizer", processor)
    side, training = tok.padding_side, model.training
    try:
        backend = TransformersBackend(model, processor, batch_size=cfg.batch_size)
        gens = backend.generate([_request(r) for r in records], SamplingParams(max_tokens=cfg.max_new_tokens))
    finally:  # training goes on with its own padding side and mode
        tok.padding_side = side
        model.train(training)
    answers = [g.texts[0] if g.error is None and g.texts else "" for g in gens]
    verdicts = rubric.score_batch(answers, [_sample(r) for r in records])
    parts = {p.name: [v.parts[p.name].value for v in verdicts] for p in rubric.parts}
    return summarize_eval([v.total for v in verdicts], parts)


def eval_callback(
    cfg: EvalConfig, rubric: Any, processor: Any, write: Callable[[int, EvalMetrics], None]
) -> Any:
    """A ``TrainerCallback`` running :func:`evaluate` at every ``cfg.every``-th global step;
    ``write(step, metrics)`` records the row (the main process writes ``log.jsonl``)."""
    # lazy: transformers loads only when a model or trainer is built
    from transformers import TrainerCallback

    records = load_eval_records(cfg)

    class Evaluation(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):  # noqa: ANN001
            if model is None or state.global_step % cfg.every:
                return
            metrics = evaluate(model, processor, rubric, records, cfg)
            if state.is_world_process_zero:
                write(state.global_step, metrics)

    return Evaluation()


def jsonl_writer(path: Path, stage: str) -> Callable[[int, EvalMetrics], None]:
    """Appends an eval row to the run's ``log.jsonl`` (the training rows' format)."""

    def write(step: int, metrics: EvalMetrics) -> None:
        row = {"stage": stage, "step": step, **metrics}
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")

    return write
