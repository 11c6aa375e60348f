"""EQA-RM rejective fine-tuning (RFT) as a stage: sample, keep by Eq. 1, SFT.

For every training instance (:func:`groundrl.train.rm_data.read_instances`) an
*auxiliary evaluator* R^aux writes ``k`` candidate evaluations of the instance's
keyframes, question, reasoning and answer, without the ground truth [EQA-RM §4.2 step 1]
— through the one EQA-RM prompt (:mod:`groundrl.train.rm_data`). R^aux is the
``sampler:`` judge block (:class:`~groundrl.judges.config.JudgeConfig`): an
OpenAI-compatible server (``{backend: openai, model: …, url: …}``, e.g. vLLM) or a local
checkpoint (``{backend: transformers, model: PATH}``), and it must not be the model being
trained. There is no default evaluator: a missing ``sampler`` is a config error naming
the key. ``sampler: policy`` samples the current model instead (the previous stage's
``final/``, or ``model``) — a documented difference from the paper, useful when no
stronger evaluator is at hand. Eq. 1
(:func:`groundrl.curate.rejective.rejective_filter`) keeps evaluation ``i`` when
``|s* − s_i| < τ``, and drops an instance whose ``k`` evaluations are all correct (too
easy). The kept outputs — exactly as sampled — are the SFT targets, with the same
prompt and keyframes.

``rft:`` block: ``k`` (samples per instance; default 8 — our choice, the paper does not
give it), ``tau`` (default **2.0** — our choice: the paper does not state τ; 2 matches
the benchmark's ``|Δ| ≤ 2`` tolerance, and being strict, a score off by exactly 2 is
rejected), ``temperature`` (1.0), ``max_tokens`` (512), ``seed`` (0), ``sampler``
(a judge block for R^aux, or ``policy``; required). The stage's ``sft:`` block sets the
``SFTConfig``.

Writes ``<stage>/sampled.jsonl`` (every instance with its ``evaluations``) and
``<stage>/rft.jsonl`` (the kept SFT rows), appends one ``log.jsonl`` row with
``rft/kept_rate`` (kept evaluations / sampled evaluations), ``rft/kept_instances``,
``rft/too_easy``, ``rft/none_correct``, ``rft/errors``; ``report.md`` shows the counts.
When nothing is kept the SFT is skipped (logged) and the next stage starts from the
same model.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.curate.rejective import rejective_filter
from groundrl.io import write_jsonl
from groundrl.judges.base import SamplingParams
from groundrl.judges.config import JudgeConfig
from groundrl.judges.transformers_backend import TransformersBackend
from groundrl.settings import parse_settings
from groundrl.train.builders import resolve_model, sft_trainer
from groundrl.train.hardware import Hardware
from groundrl.train.ranks import run_once
from groundrl.train.rm_data import eqa_rm_messages, load_keyframes, read_instances
from groundrl.train.runlog import LOG_FILE
from groundrl.train.stage_kinds import StageResult
from groundrl.train.stage_settings import RFTStageSettings

log = logging.getLogger("groundrl.train")


@dataclass(frozen=True)
class RFTConfig:
    k: int = 8
    tau: float = 2.0
    temperature: float = 1.0
    max_tokens: int = 512
    seed: int = 0
    sampler: Any = None

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"rft.k must be an integer ≥ 1, got {self.k!r}")
        if (
            isinstance(self.tau, bool)
            or not isinstance(self.tau, (int, float))
            or not (math.isfinite(self.tau) and self.tau > 0)
        ):
            raise ValueError(f"rft.tau must be a number > 0 (default 2), got {self.tau!r}")
        if self.sampler is None:
            raise ValueError(
                "rft.sampler is required: EQA-RM samples the RFT candidates from an auxiliary evaluator "
                "R^aux [EQA-RM §4.2 step 1]; give a judge block, e.g. {backend: openai, model: NAME, url: "
                "http://HOST:PORT/v1} or {backend: transformers, model: PATH}, or `sampler: policy` to sample "
                "the model being trained"
            )
        if self.sampler != "policy":
            try:
                object.__setattr__(self, "sampler", JudgeConfig.from_mapping(self.sampler))
            except ValueError as e:
                raise ValueError(f"rft.sampler: `policy` or a judge block ({e})") from None

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> RFTConfig:
        return parse_settings(cls, raw, "rft")


def select_rft(
    instances: Iterable[Mapping[str, Any]], tau: float = 2.0
) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """Eq. 1 over instances with sampled ``evaluations``: ``(kept, counts)`` where
    ``kept`` lists ``(instance index, evaluation index)`` pairs in order and ``counts``
    has ``instances``, ``sampled``, ``kept`` (evaluations), ``kept_instances``,
    ``too_easy``, ``none_correct``, ``errors``.

    >>> select_rft([{"gt_score": 7, "evaluations": ["<score>6</score>", "<score>1</score>"]},
    ...             {"gt_score": 7, "evaluations": ["<score>7</score>"]}])[0]
    [(0, 0)]
    """
    kept: list[tuple[int, int]] = []
    counts = dict.fromkeys(
        ("instances", "sampled", "kept", "kept_instances", "too_easy", "none_correct", "errors"), 0
    )
    for j, inst in enumerate(instances):
        counts["instances"] += 1
        counts["sampled"] += len(inst.get("evaluations") or [])
        res = rejective_filter(dict(inst), tau)
        reason = res["reason"]
        counts[{"kept": "kept_instances", "error": "errors"}.get(reason, reason)] += 1
        kept += [(j, i) for i in res["kept"]]
    counts["kept"] = len(kept)
    return kept, counts


def _sampler(cfg: RFTConfig, model: str) -> Any:
    """The backend that writes the candidates: R^aux (the judge block) or the policy."""
    if cfg.sampler == "policy":
        return TransformersBackend(model, batch_size=8)
    aux = getattr(cfg.sampler, "model", None)
    if aux is not None and str(aux).rstrip("/") == str(model).rstrip("/"):
        raise ValueError(
            f"rft.sampler.model {aux!r} is the model being trained; R^aux must be a distinct evaluator "
            "[EQA-RM §4.2 step 1] — name another model, or write `sampler: policy` to sample the policy on purpose"
        )
    return cfg.sampler.make_backend()


def sample_evaluations(
    instances: Sequence[Mapping[str, Any]], keyframes: list[list[Any]], cfg: RFTConfig, model: str
) -> list[list[str]]:
    """``k`` sampled evaluation texts per instance (an empty list when the call failed)."""
    # lazy: judges.papers brings orjson; loaded only when this runs
    from groundrl.judges.papers import EQARMEvaluator

    backend = _sampler(cfg, model)
    try:
        ev = EQARMEvaluator(
            backend,
            SamplingParams(temperature=cfg.temperature, max_tokens=cfg.max_tokens, n=cfg.k, seed=cfg.seed),
        )
        items = [
            {"question": r["question"], "reasoning": r["reasoning"], "answer": r["answer"], "frames": f}
            for r, f in zip(instances, keyframes, strict=True)
        ]
        gens = ev.raw(items)
    finally:
        close = getattr(backend, "close", None)
        if callable(close):
            close()
    return [list(g.texts) if g.ok else [] for g in gens]


def sft_rows(
    instances: Sequence[Mapping[str, Any]], keyframes: list[list[Any]], kept: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """TRL conversational prompt/completion rows: the EQA-RM prompt + keyframes → the
    kept evaluation text."""
    rows = []
    for j, i in kept:
        r = instances[j]
        rows.append(
            {
                "prompt": eqa_rm_messages(r["question"], r["reasoning"], r["answer"], len(keyframes[j])),
                "completion": [
                    {"role": "assistant", "content": [{"type": "text", "text": r["evaluations"][i]}]}
                ],
                "images": keyframes[j],
            }
        )
    return rows


def build_sft_on_rows(
    model: str, rows: Sequence[Mapping[str, Any]], out: Path, hw: Hardware, **config: Any
) -> Any:
    """An ``SFTTrainer`` (loss on the completion only) on ready conversational rows
    (:func:`groundrl.train.builders.sft_trainer`)."""
    return sft_trainer(model, rows, out, hw, **config)


@dataclass(frozen=True)
class RFTSample:
    """What the main process sampled and kept, broadcast to every rank."""

    texts: list[list[str]]  # the k evaluation texts per instance
    kept: list[tuple[int, int]]  # (instance, evaluation) pairs kept by Eq. 1
    counts: dict[str, float]  # the tallies of select_rft and the kept rate


def _sample_and_keep(
    instances: list[dict[str, Any]], keyframes: list[list[Any]], cfg: RFTConfig, model: str, out: Path
) -> RFTSample:
    """Sample R^aux, keep by Eq. 1, write ``sampled.jsonl`` / ``rft.jsonl`` and the log row:
    done once, on the main process of a multi-process launch (:func:`run_once`); returns
    the texts, the kept pairs and the counts for every rank to train on the same rows."""
    texts = sample_evaluations(instances, keyframes, cfg, model)
    for r, t in zip(instances, texts, strict=True):
        r["evaluations"] = t
    kept, tally = select_rft(instances, cfg.tau)
    counts: dict[str, float] = dict(tally)  # the int tallies and the float kept rate
    counts["kept_rate"] = counts["kept"] / counts["sampled"] if counts["sampled"] else 0.0
    sampled = ({k: r[k] for k in ("id", "gt_score", "evaluations")} for r in instances)
    write_jsonl(out / "sampled.jsonl", sampled, ensure_ascii=True)
    fields = ("id", "question", "reasoning", "answer", "gt_score", "frames")
    targets = (
        {**{k: instances[j][k] for k in fields}, "target": instances[j]["evaluations"][i]} for j, i in kept
    )
    write_jsonl(out / "rft.jsonl", targets, ensure_ascii=True)
    row = {"stage": out.name, "step": 0, **{f"rft/{k}": v for k, v in counts.items()}}
    with (out.parent / LOG_FILE).open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return RFTSample(texts, kept, counts)


def run_rft(recipe: str, st: RFTStageSettings, out: Path, prev_data: str | None, **_: Any) -> StageResult:
    """The ``rft`` stage runner (see the module doc)."""
    if recipe != "eqa_rm":
        raise ValueError(f"an rft stage trains an EQA-RM reward model (recipe eqa_rm), not {recipe!r}")
    cfg, inputs, data = st.rft, st.inputs, st.data
    if not data:
        raise ValueError("an rft stage needs `data:` (EQA-RM instances with frames)")
    out.mkdir(parents=True, exist_ok=True)
    instances = read_instances(data)
    base = Path(data).parent
    keyframes = [load_keyframes(r["frames"], base, inputs) for r in instances]
    model = resolve_model(st, out)
    res = run_once(lambda: _sample_and_keep(instances, keyframes, cfg, model, out))
    for r, t in zip(instances, res.texts, strict=True):
        r["evaluations"] = t
    kept = [(int(j), int(i)) for j, i in res.kept]
    counts = res.counts
    notes: dict[str, object] = {
        "sampled": f"{counts['sampled']} evaluations ({cfg.k} per instance, tau {cfg.tau:g})",
        "kept": f"{counts['kept']} evaluations from {counts['kept_instances']} instances "
        f"(kept rate {counts['kept_rate']:.3f}; too easy {counts['too_easy']}, "
        f"none correct {counts['none_correct']}, errors {counts['errors']})",
    }
    if not kept:
        log.warning("rft: no evaluation kept by Eq. 1; SFT skipped, the model is unchanged")
        notes["sft"] = "skipped: nothing kept"
        return StageResult(notes=notes)
    rows = sft_rows(instances, keyframes, kept)
    trainer = build_sft_on_rows(model, rows, out, st.hardware, **st.args)
    return StageResult(trainer=trainer, notes=notes)
