"""Reward-model stage kinds for staged train configs (:mod:`groundrl.train.stages`):
``rft``, ``cgrpo`` (EQA-RM), ``proxy_grpo``, ``proxy_sft`` and ``proxy_rl`` (Proxy-GRM).

Their runners and block parsers, registered in :mod:`groundrl.train.stage_kinds` by
name; the runners import torch/TRL only when a stage runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.integrations.trl import reward_funcs
from groundrl.io import read_jsonl
from groundrl.recipes.resolve import resolve_rubric
from groundrl.rewards.preference import proxy_accuracy
from groundrl.rubric import Part, Rubric
from groundrl.settings import parse_settings
from groundrl.train.builders import grpo_trainer, resolve_model
from groundrl.train.proxy_reward import DEFAULT_RETRIES, UNPARSEABLE, gate_unscored, make_agent, proxy_reward
from groundrl.train.rm_data import RMInputConfig, instance_row, read_instances, trl_messages
from groundrl.train.stage_kinds import StageResult
from groundrl.train.stage_settings import (
    CGRPOStageSettings,
    ProxyGRPOSettings,
    RFTStageSettings,
    StageSettings,
)


@dataclass(frozen=True)
class ProxySettings:
    """A ``proxy_grpo`` stage's ``proxy:`` block: the proxy reward's weight, what an
    unparseable proxy answer scores and how often a failed server call is retried
    (:mod:`groundrl.train.proxy_reward`)."""

    unparseable: str = "penalty"
    weight: float = 1.0
    retries: int = DEFAULT_RETRIES

    def __post_init__(self) -> None:
        if self.unparseable not in UNPARSEABLE:
            raise ValueError(
                f"proxy.unparseable must be one of {', '.join(UNPARSEABLE)}, got {self.unparseable!r}"
            )
        if self.retries < 0:
            raise ValueError(f"proxy.retries must be an integer ≥ 0, got {self.retries!r}")


def parse_inputs(raw: Any) -> Any:
    return RMInputConfig.from_mapping(raw)


def parse_cgrpo(raw: Any) -> Any:
    # lazy: train.cgrpo brings numpy; loaded only when this runs
    from groundrl.train.cgrpo import CGRPOConfig

    return CGRPOConfig.from_mapping(raw)


def parse_proxy(raw: Any) -> ProxySettings:
    return parse_settings(ProxySettings, raw, "proxy")


def run_cgrpo(recipe: str, st: CGRPOStageSettings, out: Path, prev_data: str | None, **_: Any) -> StageResult:
    """EQA-RM C-GRPO (:mod:`groundrl.train.cgrpo_trainer`) on EQA-RM instances."""
    # lazy: train.cgrpo brings numpy; loaded only when this runs
    from groundrl.train.cgrpo import contrastive_reward
    from groundrl.train.cgrpo_trainer import cgrpo_trainer_class

    if recipe != "eqa_rm":
        raise ValueError(f"a cgrpo stage trains an EQA-RM reward model (recipe eqa_rm), not {recipe!r}")
    cg, inputs, data = st.cgrpo, st.inputs, st.data
    if not data:
        raise ValueError("a cgrpo stage needs `data:` (EQA-RM instances with frames)")
    instances = read_instances(data)
    rows = [instance_row(r, Path(data).parent, inputs) for r in instances]
    funcs, weights = reward_funcs(resolve_rubric("eqa_rm", st.recipe_options))
    contrast = contrastive_reward(cg.delta, cg.mu, cg.min_acc)
    trainer = grpo_trainer(st, rows, [*funcs, contrast], [*weights, 1.0], cgrpo_trainer_class(), cgrpo=cg)
    trainer.contrastive = contrast
    notes = {
        "instances": len(rows),
        "perturbations": ", ".join(cg.types) or "none (plain GRPO)",
        "perturbed rows in the loss": "yes" if cg.train_perturbed else "no (contrast only)",
    }
    return StageResult(trainer=trainer, notes=notes)


def run_proxy_grpo(
    recipe: str, st: ProxyGRPOSettings, out: Path, prev_data: str | None, **_: Any
) -> StageResult:
    """Proxy-GRM policy GRPO: the recipe's accuracy + 0.5·format and the ``judge:`` block's
    proxy agent as reward ``proxy`` (:mod:`groundrl.train.proxy_reward`)."""
    # lazy: train.grpo brings numpy; loaded only when this runs
    from groundrl.train.grpo import build_trainer

    if recipe != "proxy_grm":
        raise ValueError(f"a proxy_grpo stage trains a Proxy-GRM policy (recipe proxy_grm), not {recipe!r}")
    judge, opts = st.judge, st.proxy
    if judge is None:
        raise ValueError(
            "a proxy_grpo stage needs `judge:` (the proxy agent: an openai server or a local model)"
        )
    fn = proxy_reward(make_agent(judge), opts.unparseable, opts.retries)
    # the judge is the proxy agent here, not a judge of the recipe's parts
    policy = dataclasses.replace(st, judge=None)
    trainer = build_trainer(recipe, policy, extra_reward_funcs=[fn], extra_weights=[opts.weight])
    gate_unscored(trainer, fn)  # a row the proxy could not score leaves the group's advantage
    trainer.proxy_reward = fn
    note = f"unparseable answer → {opts.unparseable}, server failure → unscored after {opts.retries} retries"
    return StageResult(trainer=trainer, notes={"proxy agent": f"{judge.model} ({note})"})


def _proxy_rows(data: str) -> list[dict[str, Any]]:
    """Proxy-agent rows: the proxy request (query, both responses, the rubric, image)
    in TRL's form, with ``preferred``."""
    # lazy: Pillow loads only when images are read
    from PIL import Image

    # lazy: curate.proxy brings numpy; loaded only when this runs
    from groundrl.curate.proxy import proxy_request

    rows = []
    for k, rec in enumerate(read_jsonl(data), start=1):
        if rec.get("status", "kept") != "kept":
            continue
        try:
            msgs, images = trl_messages(proxy_request(rec))
        except (KeyError, ValueError) as e:
            raise ValueError(f"{data}:{k}: {e}") from None
        base = Path(data).parent
        images = [
            Image.open(im if Path(im).is_absolute() else base / im).convert("RGB")
            if isinstance(im, str)
            else im
            for im in images
        ]
        row = {"prompt": msgs, "preferred": rec["preferred"]}
        if "target" in rec:
            row["target"] = rec["target"]
        row["images"] = images
        rows.append(row)
    if not rows:
        raise ValueError(f"{data}: no proxy records")
    if not any(r["images"] for r in rows):
        for r in rows:
            del r["images"]
    return rows


def run_proxy_sft(recipe: str, st: StageSettings, out: Path, prev_data: str | None, **_: Any) -> StageResult:
    """Proxy-SFT: the proxy agent fine-tuned on distilled teacher outputs (``target``)."""
    # lazy: train.rft brings numpy; loaded only when this runs
    from groundrl.train.rft import build_sft_on_rows

    data = prev_data or st.data
    if not data:
        raise ValueError("a proxy_sft stage needs `data:` (proxy records with `target`)")
    rows = _proxy_rows(data)
    missing = sum(1 for r in rows if not isinstance(r.get("target"), str))
    if missing:
        raise ValueError(
            f"{data}: {missing} record(s) without a `target` (run `groundrl curate proxy-distill`)"
        )
    sft_rows = []
    for r in rows:
        row = {
            "prompt": r["prompt"],
            "completion": [{"role": "assistant", "content": [{"type": "text", "text": r["target"]}]}],
        }
        if "images" in r:
            row["images"] = r["images"]
        sft_rows.append(row)
    trainer = build_sft_on_rows(resolve_model(st, out), sft_rows, out, st.hardware, **st.args)
    return StageResult(trainer=trainer, notes={"records": len(sft_rows)})


def run_proxy_rl(recipe: str, st: StageSettings, out: Path, prev_data: str | None, **_: Any) -> StageResult:
    """Proxy-RL: GRPO of the proxy agent with accuracy ±1 against ``preferred`` only."""
    data = st.data
    if not data:
        raise ValueError("a proxy_rl stage needs `data:` (proxy records)")
    rows = _proxy_rows(data)
    for r in rows:
        r.pop("target", None)
    funcs, weights = reward_funcs(Rubric([Part("accuracy", proxy_accuracy)], name="proxy_agent"))
    trainer = grpo_trainer(st, rows, funcs, weights)
    return StageResult(trainer=trainer, notes={"records": len(rows), "reward": "accuracy ±1"})


def run_rft_stage(
    recipe: str, st: RFTStageSettings, out: Path, prev_data: str | None, **_: Any
) -> StageResult:
    # lazy: train.rft brings numpy; loaded only when this runs
    from groundrl.train.rft import run_rft

    return run_rft(recipe, st, out, prev_data)
