"""``groundrl demo``: the main job on built-in defaults, CPU only, no downloads.

The Reinforced Reasoning paper's story at toy scale [paper §3.2, §4.3, Table 3]: SFT on
a fallible teacher's plans, then RL on the environment's reward lifts the student past
its teacher, also on task types RL never saw.

1. generate household planning tasks in the simulator (train and held-out, seeded);
2. run the imperfect teacher (:class:`groundrl.sim.teacher.TeacherPolicy`: the expert
   with systematic mistakes at stated rates) on the training tasks in the multi-turn
   EB-ALFRED loop; every turn it plays is an SFT demonstration, mistakes included;
3. build a small transformer from config with a tokenizer trained on the task text and
   SFT it from scratch on those demonstrations (Reinforced-Reasoning JSON plans);
4. GRPO it with the environment in the loop through TRL's ``GRPOTrainer``
   (:class:`groundrl.train.multiturn.EnvRollout` as ``rollout_func``) on the training
   tasks of *some* task types only (``rl_task_types``): the policy writes a plan, the
   environment runs it, on a failed action the policy sees the feedback and re-plans;
   the episode's reward (progress + success bonus) is the GRPO reward;
5. evaluate untrained / teacher / SFT / GRPO on the same held-out tasks with the same
   multi-turn loop (the models greedy), split into task types seen in RL and never seen
   in RL, with bootstrap 95 % intervals, the paired interval of GRPO − SFT, and the
   share of episodes that show each teacher mistake (read back from the episode traces,
   :func:`groundrl.sim.teacher.count_mistakes`); write ``report.md``, ``success.png``
   (the headline), ``reward_curve.png``, ``metrics.json`` and the trained planner.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, Protocol, TypedDict

from groundrl import intervals
from groundrl.demos.filtered_sft import TurnRecord, filtered_sft
from groundrl.rewards.planning import reinforced_accuracy, reinforced_format
from groundrl.sim.execute import execute
from groundrl.sim.generate import generate_tasks
from groundrl.sim.tasks import Task
from groundrl.sim.teacher import (
    DEFAULT_RATES,
    MISTAKES,
    check_rates,
    count_mistakes,
    draw_habits,
    replay,
    teacher_plan,
)
from groundrl.train.multiturn import EnvRollout, cut_at_eos, default_feedback_text, env_reward_funcs
from groundrl.train.planning_data import global_action_map, plan_json, prompt, records
from groundrl.train.progress import attach_progress

DEMO_TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_two_obj_and_place",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
)
# RL sees four of the six types; the other two test transfer, as the paper's RFT data
# hold base tasks only and EB-Habitat / other subsets read generalisation [paper §4.2, App. C]
RL_TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
)


@dataclass
class DemoConfig:
    n_train: int = 1000
    n_eval: int = 400  # held-out tasks; the same ones for every stage (paired)
    # the untrained model writes no plan (success 0 on every task so far) and is the slowest to
    # evaluate (it never stops before max_new_tokens): the first 100 held-out tasks suffice [ours]
    n_eval_untrained: int = 100
    teacher_rates: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    rl_task_types: tuple[str, ...] = RL_TASK_TYPES
    # SFT to near convergence (loss ≈0.1): the room for RL is the teacher's mistakes, not an
    # under-trained student, and a sharp student samples fewer errors beside them [ours]
    sft_epochs: int = 8
    sft_batch: int = 32
    sft_lr: float = 2e-3
    grpo_steps: int = 100
    grpo_batch: int = 32  # episodes per step (grpo_batch / num_generations prompts)
    num_generations: int = 8
    grpo_lr: float = 2e-4  # see docs/sim.md for the settings tried
    grpo_warmup_ratio: float = 0.0  # linear warm-up, a share of the GRPO steps
    grpo_scale_rewards: str = "group"  # TRL: "group" (GRPO's std scaling) or "none" (Dr. GRPO)
    grpo_temperature: float = 1.0  # sampling temperature of the GRPO rollouts
    grpo_freeze_embeddings: bool = (
        True  # GRPO trains the transformer blocks; the (tied) embeddings stay as SFT left them
    )
    # the success-filtered SFT baseline (demos/filtered_sft.py): GRPO's episode budget over
    # this many rounds of sample -> keep successes -> fine-tune, each at this lr for these epochs;
    # 0 rounds skips it [ours]
    fsft_rounds: int = 4
    fsft_epochs: int = 2
    fsft_lr: float = 5e-4
    max_turns: int = 3  # policy turns per episode: the first plan and up to 2 re-plans
    hidden: int = 128
    layers: int = 2
    max_new_tokens: int = 80
    seed: int = 0

    def __post_init__(self) -> None:
        self.teacher_rates = check_rates(self.teacher_rates)
        bad = [t for t in self.rl_task_types if t not in DEMO_TASK_TYPES]
        if bad or not self.rl_task_types:
            raise ValueError(f"rl_task_types {bad or '()'} must be a non-empty subset of {DEMO_TASK_TYPES}")
        for k in (
            "n_train",
            "n_eval",
            "n_eval_untrained",
            "sft_epochs",
            "grpo_batch",
            "num_generations",
            "max_turns",
        ):
            if getattr(self, k) < 1:
                raise ValueError(f"demo {k} must be ≥ 1, got {getattr(self, k)}")
        for k in ("grpo_steps", "fsft_rounds"):
            if getattr(self, k) < 0:
                raise ValueError(f"demo {k} must be ≥ 0, got {getattr(self, k)}")
        if self.fsft_rounds and (self.fsft_epochs < 1 or self.fsft_lr <= 0):
            raise ValueError(
                f"demo fsft_epochs ({self.fsft_epochs}) must be ≥ 1 and fsft_lr ({self.fsft_lr}) > 0, "
                "or fsft_rounds 0 to skip the filtered-SFT baseline"
            )
        if self.grpo_batch % self.num_generations:
            raise ValueError(
                f"demo grpo_batch ({self.grpo_batch}) must be a multiple of num_generations ({self.num_generations})"
            )

    @classmethod
    def quick(cls, **over: Any) -> DemoConfig:
        base = {
            "n_train": 300,
            "n_eval": 24,
            "sft_epochs": 10,
            "grpo_steps": 6,
            "grpo_batch": 8,
            "num_generations": 4,
            "hidden": 96,
            "layers": 2,
            "sft_lr": 3e-3,
            "fsft_rounds": 2,
        }
        return cls(**{**base, **over})


def demo_tasks(n: int, seed: int) -> list:
    """Base-subset tasks of the six single-object ALFRED types (no slicing, no movable
    receptacle: plans of 3–12 steps a small model can learn in minutes)."""
    out: list[Task] = []
    s = seed
    while len(out) < n:
        for t in generate_tasks(64, seed=s, subsets=["base"]):
            if t.task_type in DEMO_TASK_TYPES and len(out) < n:
                out.append(t)
        s += 1
    return out


def split_tasks(cfg: DemoConfig) -> tuple[list[Task], list[Task], list[Task]]:
    """All generated tasks, the training tasks (the first ``n_train``) and the held-out
    tasks: the next ``n_eval`` less those whose prompt equals a training prompt (the
    generator repeats a scene now and then: 44 of seed 0's 400 held-out prompts did, all
    with the same expert plan as their training twin). Held-out therefore means unseen
    by SFT, GRPO and the filtered-SFT baseline alike; ``n_eval`` is an upper bound."""
    tasks = demo_tasks(cfg.n_train + cfg.n_eval, cfg.seed)
    train = tasks[: cfg.n_train]
    seen = {prompt(t) for t in train}
    return tasks, train, [t for t in tasks[cfg.n_train :] if prompt(t) not in seen]


class TeacherTurn(TurnRecord):
    """A turn the teacher played: an SFT demonstration, mistakes included."""

    id: str  # the task's


class TeacherEpisode(TypedDict):
    """One episode the teacher played."""

    success: int
    texts: list[str]  # its plan per turn
    made: list[tuple[str, ...]]  # the mistakes applied to each plan
    habits: frozenset[str]  # the mistakes drawn for the episode
    task: Task


def teacher_episodes(
    tasks: list, amap: dict[int, str], cfg: DemoConfig
) -> tuple[list[TeacherTurn], list[TeacherEpisode]]:
    """The teacher's multi-turn episodes (the loop and budgets of
    :class:`~groundrl.train.multiturn.EnvRollout`). Returns the SFT records (one per turn:
    the prompt, the earlier turns with their feedback as context, the teacher's plan as
    target) and one result per episode (``success``, ``texts``, ``habits``: the episode's
    mistakes, drawn from ``random.Random(f"{seed}:{task id}")``; ``made``: those applied
    to each plan)."""
    # lazy: sim.env brings gymnasium (about 100 modules); loaded only when episodes are played
    from groundrl.sim.env import HouseholdEnv

    recs: list[TeacherTurn] = []
    results: list[TeacherEpisode] = []
    if not tasks:
        return recs, results
    env = HouseholdEnv(list(tasks), reward="plan")
    for t in tasks:
        habits = draw_habits(random.Random(f"{cfg.seed}:{t.id}"), cfg.teacher_rates)
        env.reset(options={"task": t})
        turns: list[tuple[str, str]] = []
        made: list[tuple[str, ...]] = []
        texts: list[str] = []
        success = False
        for _ in range(cfg.max_turns):
            assert env.sim is not None
            names, mistakes = teacher_plan(t, env.sim, habits)
            text = plan_json(names, amap)
            made.append(mistakes)
            recs.append(
                {"id": t.id, "prompt": prompt(t), "turns": list(turns), "completion": text, "task": t}
            )
            texts.append(text)
            obs, _, term, trunc, info = env.step(text)
            success = bool(info["success"])
            if term or trunc:
                break
            turns.append((text, default_feedback_text(info, obs)))
        results.append({"success": int(success), "texts": texts, "made": made, "habits": habits, "task": t})
    return recs, results


def build_policy(texts: list[str], hidden: int, layers: int, seed: int):
    # lazy: torch, tokenizers and transformers load only when a policy is built
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.BPE())
    # no regex pre-split: merges may span punctuation, so '{"action_id": ' and whole
    # action names become single tokens and a plan is ~3x shorter than with GPT-2 splitting
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=2000,
            max_token_length=24,
            special_tokens=["<|endoftext|>", "<|pad|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|pad|>")
    tokenizer.padding_side = "left"
    torch.manual_seed(seed)
    cfg = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(cfg)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model, tokenizer


class SftSettings(Protocol):
    """What :func:`sft` reads of a config (:class:`DemoConfig` and the monitor demo's)."""

    @property
    def seed(self) -> int: ...
    @property
    def sft_lr(self) -> float: ...
    @property
    def sft_epochs(self) -> int: ...
    @property
    def sft_batch(self) -> int: ...


def sft(model, tokenizer, recs: Sequence[Mapping[str, Any]], cfg: SftSettings, log) -> list[float]:
    """Completion-only cross-entropy on (context, expert completion) pairs: a record's
    ``prompt`` and ``turns`` (earlier plans and the environment's feedback, optional) are
    context, its ``completion`` the target. Any record with those keys: the demos' teacher
    turns, :func:`~groundrl.train.planning_data.records`, filtered-SFT turns."""
    # lazy: torch loads only when a model is built or run; importing the demo stays light
    import torch

    rng = random.Random(cfg.seed)
    pairs = []
    for r in recs:
        p = tokenizer(r["prompt"], add_special_tokens=False)["input_ids"]
        for plan, feedback in r.get("turns", ()):  # earlier turns are context, not targets
            p += tokenizer(plan, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            p += tokenizer(feedback, add_special_tokens=False)["input_ids"]
        c = tokenizer(r["completion"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        pairs.append((p, c))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.sft_lr, weight_decay=0.0)
    total = cfg.sft_epochs * math.ceil(len(pairs) / cfg.sft_batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.sft_lr, total_steps=total, pct_start=0.1)
    losses = []
    model.train()
    step = 0
    for epoch in range(cfg.sft_epochs):
        for batch in _length_batches(pairs, cfg.sft_batch, rng):
            width = max(len(p) + len(c) for p, c in batch)
            ids = torch.full((len(batch), width), tokenizer.pad_token_id)
            labels = torch.full((len(batch), width), -100)
            attn = torch.zeros((len(batch), width), dtype=torch.long)
            for i, (p, c) in enumerate(batch):
                seq = p + c
                ids[i, : len(seq)] = torch.tensor(seq)
                labels[i, len(p) : len(seq)] = torch.tensor(c)
                attn[i, : len(seq)] = 1
            loss = model(input_ids=ids, attention_mask=attn, labels=labels).loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            losses.append(loss.item())
        log(f"  SFT epoch {epoch + 1}/{cfg.sft_epochs}: loss {sum(losses[-10:]) / len(losses[-10:]):.3f}")
    model.eval()
    return losses


def _length_batches(pairs: list, size: int, rng: random.Random) -> list[list]:
    """Batches of similar length (shuffled, sorted by length in windows of 8 batches, cut,
    batch order shuffled): re-planning demonstrations are 2-4x longer than first plans, and
    random batches padded to their longest row held 282k token positions per epoch for
    128k real tokens (600 teacher episodes, seed 0), these 148k [ours]."""
    order = list(pairs)
    rng.shuffle(order)
    window = size * 8
    out = []
    for w in range(0, len(order), window):
        chunk = sorted(order[w : w + window], key=lambda pc: len(pc[0]) + len(pc[1]))
        out += [chunk[b : b + size] for b in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def greedy(model, tokenizer, contexts: list[list[int]], max_new_tokens: int, trainer=None, batch: int = 300):
    """Greedy continuations of token-id contexts (left-padded batches), each cut after its
    first EOS (:func:`~groundrl.train.multiturn.cut_at_eos`)."""
    # lazy: torch loads only when a model is built or run; importing the demo stays light
    import torch

    pad = tokenizer.pad_token_id
    out: list[list[int]] = []
    for b in range(0, len(contexts), batch):
        chunk = contexts[b : b + batch]
        width = max(len(c) for c in chunk)
        ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        attn = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, c in enumerate(chunk):
            ids[r, width - len(c) :] = torch.tensor(c, dtype=torch.long)
            attn[r, width - len(c) :] = 1
        with torch.inference_mode():
            gen = model.generate(
                input_ids=ids,
                attention_mask=attn,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
                eos_token_id=tokenizer.eos_token_id,
            )
        out.extend(cut_at_eos(gen[:, width:].tolist(), tokenizer.eos_token_id))
    return out


class FirstPlanMetrics(TypedDict):
    """What a stage's first plans score alone (:func:`first_plan_metrics`)."""

    format_valid: float
    prefix_accuracy: float
    first_plan_success_rate: float
    example: str


class OutcomeMetrics(TypedDict):
    """A stage's episode outcomes (:func:`outcome_metrics`); the ``_rl_types`` /
    ``_new_types`` values are ``None`` where no held-out task is of those types."""

    n_eval_tasks: int
    success_rate: float
    success_ci95: list[float]
    success_rate_rl_types: float | None
    success_ci95_rl_types: list[float] | None
    success_rate_new_types: float | None
    success_ci95_new_types: list[float] | None
    mistake_share: dict[str, float]  # teacher mistake -> share of episodes showing it


class StageMetrics(FirstPlanMetrics, OutcomeMetrics):
    """A stage's held-out metrics (``metrics.json`` ``untrained`` / ``teacher`` / ``sft`` / …)."""

    mean_turns: float


def evaluate_policy(
    model, tokenizer, recs: Sequence[Mapping[str, Any]], amap: dict[int, str], cfg: DemoConfig
) -> tuple[StageMetrics, list[int]]:
    """Greedy EB-ALFRED episodes of up to ``cfg.max_turns`` turns on every record's task
    (``recs``: :func:`~groundrl.train.planning_data.records`). Returns the stage's metrics
    and the per-task episode success (0/1, for the paired bootstrap). ``format_valid`` /
    ``prefix_accuracy`` / ``first_plan_success_rate`` judge the first plan alone;
    ``success_rate`` the whole episode with re-planning."""
    model.eval()
    rollout = EnvRollout({r["prompt"]: r["task"] for r in recs}, max_turns=cfg.max_turns, generate_fn=greedy)
    episodes = rollout.play(model, tokenizer, [r["prompt"] for r in recs], cfg.max_new_tokens)
    succ = [int(e.success) for e in episodes]
    first = first_plan_metrics([e.texts[0] if e.texts else "" for e in episodes], recs, amap)
    turns = sum(e.turns for e in episodes) / max(1, len(episodes))
    outcome = outcome_metrics(succ, [e.texts for e in episodes], [r["task"] for r in recs], cfg)
    m: StageMetrics = {**first, "mean_turns": turns, **outcome}
    return m, succ


def first_plan_metrics(
    first: list[str], recs: Sequence[Mapping[str, Any]], amap: dict[int, str]
) -> FirstPlanMetrics:
    """Format validity (full format reward 0.5), prefix accuracy against the expert plan
    and open-loop success of each episode's first plan."""
    n = max(1, len(first))
    # both rewards always apply (never None); `or 0.0` only narrows the Score's float | None
    fmt = [reinforced_format(c, amap).value or 0.0 for c in first]
    acc = [reinforced_accuracy(c, r["gold"]).value or 0.0 for c, r in zip(first, recs, strict=True)]
    return {
        "format_valid": sum(f >= 0.5 - 1e-9 for f in fmt) / n,
        "prefix_accuracy": sum(max(0.0, a) for a in acc) / n,
        "first_plan_success_rate": sum(
            execute(r["task"], c).success for c, r in zip(first, recs, strict=True)
        )
        / n,
        "example": first[0] if first else "",  # whole (max_new_tokens bounds it): a cut JSON plan misleads
    }


def outcome_metrics(succ: list[int], texts: list[list[str]], tasks: list, cfg: DemoConfig) -> OutcomeMetrics:
    """Episode success with its bootstrap CI, overall and on the task types seen / never
    seen in RL, and the share of episodes showing each teacher mistake (read back from
    the replayed trace, :func:`groundrl.sim.teacher.count_mistakes`)."""
    n = len(succ)
    parts = split_by_rl(succ, tasks, cfg.rl_task_types)
    seen, new = parts["rl_types"], parts["new_types"]
    counts = {k: 0 for k in MISTAKES}
    for t, ts in zip(tasks, texts, strict=True):
        for k in count_mistakes(replay(t, ts)):
            counts[k] += 1
    return {
        "n_eval_tasks": n,
        "success_rate": sum(succ) / max(1, n),
        "success_ci95": list(bootstrap_ci(succ, seed=cfg.seed)),
        "success_rate_rl_types": _part_rate(seen),
        "success_ci95_rl_types": _part_ci(seen, cfg.seed),
        "success_rate_new_types": _part_rate(new),
        "success_ci95_new_types": _part_ci(new, cfg.seed),
        "mistake_share": {k: round(v / max(1, n), 4) for k, v in counts.items()},
    }


def _part_rate(part: list[int]) -> float | None:
    return round(sum(part) / len(part), 4) if part else None


def _part_ci(part: list[int], seed: int) -> list[float] | None:
    return list(bootstrap_ci(part, seed=seed)) if part else None


def split_by_rl(xs: list, tasks: list, rl_types: tuple[str, ...]) -> dict[str, list]:
    """``xs`` (one value per task) parted into task types seen in RL and never seen in RL.

    >>> from types import SimpleNamespace as T
    >>> split_by_rl([1, 0, 1], [T(task_type="a"), T(task_type="b"), T(task_type="a")], ("a",))
    {'rl_types': [1, 1], 'new_types': [0]}
    """
    seen = [x for x, t in zip(xs, tasks, strict=True) if t.task_type in rl_types]
    new = [x for x, t in zip(xs, tasks, strict=True) if t.task_type not in rl_types]
    return {"rl_types": seen, "new_types": new}


def bootstrap_ci(
    xs: list[int] | list[float],
    ys: list[int] | list[float] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of ``mean(xs)`` — or, with ``ys``, of the paired
    difference ``mean(ys) - mean(xs)`` (tasks resampled with replacement, the same tasks
    for both policies: the mean of the per-task differences), ``n_boot`` resamples of
    :func:`groundrl.intervals.bootstrap_ci` (the package's one bootstrap), rounded to 4
    places; ``(nan, nan)`` for no tasks.

    >>> bootstrap_ci([1, 1, 1, 1])
    (1.0, 1.0)
    >>> bootstrap_ci([0, 0, 0, 0], [1, 1, 1, 1])
    (1.0, 1.0)
    """
    d = [float(x) for x in xs] if ys is None else [float(y) - x for x, y in zip(xs, ys, strict=True)]
    lo, hi = intervals.bootstrap_ci(d, lambda s: sum(s) / len(s), n=n_boot, seed=seed)
    if lo is None or hi is None:
        return (float("nan"), float("nan"))
    return (round(lo, 4), round(hi, 4))


def _grpo_args(cfg: DemoConfig, out: Path, weights: Any) -> Any:
    """The demo's ``GRPOConfig``."""
    # lazy: trl loads only when GRPO runs
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out / "grpo"),
        use_cpu=True,
        bf16=False,
        learning_rate=cfg.grpo_lr,
        max_steps=cfg.grpo_steps,
        per_device_train_batch_size=cfg.grpo_batch,
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_new_tokens,
        temperature=cfg.grpo_temperature,
        scale_rewards=cfg.grpo_scale_rewards,
        warmup_steps=cfg.grpo_warmup_ratio,  # a float in [0, 1): a share of max_steps
        beta=0.0,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        reward_weights=weights,
        seed=cfg.seed,
        disable_tqdm=True,
    )


class GrpoCurvePoint(TypedDict):
    """One logged GRPO step (``metrics.json`` ``grpo_curve``; ``None`` where TRL logged nothing)."""

    step: float
    reward: float | None
    reward_std: float | None
    success: float | None  # the environment's success rate of the step's episodes
    turns: NotRequired[float | None]  # mean turns of the rollout batch (multi-turn demos)


def _grpo_curve(trainer: Any, rollout: EnvRollout) -> list[GrpoCurvePoint]:
    """Per logged step: reward, its spread, success and the rollout batch's mean turns."""
    args = trainer.args
    logs = [h for h in trainer.state.log_history if "reward" in h]
    # GRPOConfig fills steps_per_generation (default: gradient_accumulation_steps)
    per_batch = max(1, args.num_iterations * (args.steps_per_generation or args.gradient_accumulation_steps))
    curve: list[GrpoCurvePoint] = [
        {
            "step": h["step"],
            "reward": h.get("reward"),
            "reward_std": h.get("reward_std"),
            "success": h.get("rewards/env_success/mean"),
            # one rollout batch serves num_iterations optimiser steps
            "turns": rollout.history[min(i // per_batch, len(rollout.history) - 1)]["turns"]
            if rollout.history
            else None,
        }
        for i, h in enumerate(logs)
    ]
    return curve


class PromptTask(TypedDict):
    """A GRPO training prompt and the task the environment plays for it."""

    prompt: str
    task: Task


def grpo(
    model,
    tokenizer,
    recs: Sequence[PromptTask],
    cfg: DemoConfig,
    out: Path,
    log,
    stats: dict[str, int] | None = None,
) -> list[GrpoCurvePoint]:
    """GRPO with the environment in the loop: TRL's ``GRPOTrainer`` with
    :class:`~groundrl.train.multiturn.EnvRollout` as ``rollout_func`` (multi-turn
    episodes, re-planning on feedback) and the episode's environment reward.
    ``stats["episodes"]`` counts the episodes the rollouts played (the rewarded
    episodes the filtered-SFT baseline is given)."""
    # lazy: datasets and trl load only when GRPO runs
    from datasets import Dataset
    from trl import GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    funcs, weights = env_reward_funcs()
    rollout = EnvRollout({r["prompt"]: r["task"] for r in recs}, max_turns=cfg.max_turns)
    ds = Dataset.from_list([{"prompt": r["prompt"]} for r in recs])
    played = stats if stats is not None else {}
    played["episodes"] = 0

    def counted(prompts, trainer):
        played["episodes"] += len(prompts)
        return rollout(prompts, trainer)

    args = _grpo_args(cfg, out, weights)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=list(funcs),  # a fresh list typed as TRL's (str | model | callable): list is invariant
        args=args,
        train_dataset=ds,
        rollout_func=counted,
    )
    emb = model.get_input_embeddings().weight
    emb.requires_grad_(not cfg.grpo_freeze_embeddings)
    model.train()
    attach_progress(trainer, "grpo", log)  # live step/ETA/reward/success line instead of TRL's dicts
    try:
        trainer.train()
    finally:
        emb.requires_grad_(True)
    curve = _grpo_curve(trainer, rollout)
    model.eval()
    grpo_dir = out / "grpo"  # TRL's output_dir: nothing is saved there (save_strategy "no")
    if grpo_dir.is_dir() and not any(grpo_dir.iterdir()):
        grpo_dir.rmdir()
    return curve


#: The GRPO panel's lines: key, colour, label, style, width, z-order. The reward is drawn
#: wide underneath, so the success line equal to it stays visible.
CURVE_LINES: tuple[tuple[Literal["success", "reward"], str, str, str, float, int], ...] = (
    ("success", "tab:orange", "episode success rate (max 1)", "--", 1.6, 3),
    ("reward", "tab:blue", "episode reward: progress + success bonus (max 2)", "-", 2.4, 2),
)


def plot_curve(
    curve: Sequence[GrpoCurvePoint],
    sft_losses: list[float],
    path: Path,
    group: int = 0,
    grpo_title: str = "GRPO, environment in the loop (multi-turn)",
) -> None:
    """SFT loss per step (left) and, per GRPO step (right), the mean episode reward with an
    approximate 95% CI band (mean ± 1.96·std/√n over the step's ``group`` episodes) and
    the episode success rate. Legends sit below the axes, off the data."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the backend is chosen

    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2))
    axes[0].plot(range(1, len(sft_losses) + 1), sft_losses, color="tab:gray", label="SFT loss")
    axes[0].set_title("SFT on the teacher's plans")
    axes[0].set_xlabel("optimisation step")
    axes[0].set_ylabel("cross-entropy loss (per token)")
    axes[0].set_ylim(bottom=0)
    axes[0].grid(alpha=0.3)
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, fontsize=8, frameon=False)
    ax = axes[1]
    steps = [c["step"] for c in curve]
    nan = float("nan")
    for key, color, label, style, width, z in CURVE_LINES:
        ys = [nan if (v := c.get(key)) is None else v for c in curve]
        if len(steps) <= 40:
            ax.plot(steps, ys, label=label, color=color, marker=".", ls=style, lw=width, zorder=z)
            continue
        # many steps: the raw step means faint, a 25-step running mean on top
        ax.plot(steps, ys, color=color, ls=style, lw=0.6, alpha=0.35, zorder=z)
        w = 25
        run = [
            sum(ys[max(0, i - w + 1) : i + 1]) / len(ys[max(0, i - w + 1) : i + 1]) for i in range(len(ys))
        ]
        ax.plot(
            steps, run, label=f"{label}, {w}-step running mean", color=color, ls=style, lw=width, zorder=z + 1
        )
    if group > 1 and len(steps) <= 40 and any(c.get("reward_std") is not None for c in curve):
        half = [1.96 * (c.get("reward_std") or 0.0) / math.sqrt(group) for c in curve]
        mean = [nan if (r := c.get("reward")) is None else r for c in curve]
        ax.fill_between(
            steps,
            [m - h for m, h in zip(mean, half, strict=True)],
            [m + h for m, h in zip(mean, half, strict=True)],
            color="tab:blue",
            alpha=0.15,
            label=f"reward: ≈95% CI of the step mean (n={group})",
        )
    ax.set_title(grpo_title)
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(f"mean per step{f' (n={group} episodes)' if group else ''}")
    vals = [r for c in curve if (r := c.get("reward")) is not None]
    ax.set_ylim(min([0.0, *[v - 0.1 for v in vals]]), min(2.2, max([1.1, *[v + 0.3 for v in vals]])))
    if steps:
        ax.set_xticks(steps if len(steps) <= 12 else steps[:: max(1, len(steps) // 6)])
    ax.grid(alpha=0.3)
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
        ncol=2 if len(steps) <= 40 else 1,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


STAGES = (
    ("untrained", "untrained", "#b0b0b0"),
    ("teacher", "teacher (SFT data)", "#8e6cbf"),
    ("sft", "SFT", "#4c8bd6"),
    ("fsft", "SFT → filtered SFT (same rewarded episodes as GRPO)", "#3aa17e"),
    ("grpo", "SFT → GRPO", "#e8852a"),
)
GROUPS = (
    ("", "all held-out"),
    ("_rl_types", "task types\nseen in RL"),
    ("_new_types", "task types\nnever in RL"),
)


def plot_headline(m: Mapping[str, Any], path: Path) -> None:
    """The result in one picture: held-out episode success per stage with 95 % CIs, on
    all tasks and on task types seen / never seen in RL; the paired GRPO − SFT difference
    with its CI; and how often each teacher mistake shows in held-out episodes."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the backend is chosen

    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2), gridspec_kw={"width_ratios": [2.4, 1.4, 1.7]})
    stages = [s for s in STAGES if s[0] in m]
    _plot_success(axes[0], m, stages)
    _plot_differences(axes[1], m)
    _plot_mistakes(axes[2], m, stages[1:])
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_success(ax: Any, m: Mapping[str, Any], stages: list) -> None:
    """Held-out success per stage and task group, with 95 % CIs."""
    width = 0.8 / len(stages)
    for j, (key, label, color) in enumerate(stages):
        for g, (suffix, _) in enumerate(GROUPS):
            v = m[key].get(f"success_rate{suffix}")
            ci = m[key].get(f"success_ci95{suffix}")
            if v is None or ci is None:
                continue
            x = g + (j - (len(stages) - 1) / 2) * width
            if key == "untrained" and m[key]["n_eval_tasks"] != m["n_eval_tasks"]:
                label = f"untrained (first {m[key]['n_eval_tasks']} tasks)"
            ax.bar(x, v, width * 0.92, color=color, label=label if g == 0 else None)
            ax.errorbar(x, v, yerr=[[v - ci[0]], [ci[1] - v]], color="black", capsize=3, lw=1)
            ax.text(x, ci[1] + 0.015, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(GROUPS)), [g[1] for g in GROUPS])
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("episode success on held-out tasks")
    ax.set_title(f"Held-out success ({m['n_eval_tasks']} tasks, greedy; bars: 95% bootstrap CI)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, fontsize=8, frameon=False)


def _plot_differences(ax: Any, m: Mapping[str, Any]) -> None:
    """The paired differences GRPO − SFT (and − filtered SFT) per task group."""
    diffs = [("grpo_minus_sft", "GRPO − SFT", "#e8852a", "o")]
    if "fsft" in m:
        diffs.append(("grpo_minus_fsft", "GRPO − filtered SFT", "#3aa17e", "s"))
    for i, (key, label, color, marker) in enumerate(diffs):
        for g, (suffix, _) in enumerate(GROUPS):
            d, ci = m.get(f"{key}{suffix}"), m.get(f"{key}_ci95{suffix}")
            if d is None or ci is None:
                continue
            x = g + (i - (len(diffs) - 1) / 2) * 0.3
            ax.errorbar(
                x,
                d,
                yerr=[[d - ci[0]], [ci[1] - d]],
                fmt=marker,
                color=color,
                capsize=4,
                lw=2,
                label=label if g == 0 else None,
            )
            ax.text(x + 0.06, d, f"{d:+.3f}\n[{ci[0]:+.3f},\n{ci[1]:+.3f}]", va="center", fontsize=6.5)
    ax.axhline(0, color="black", lw=1)
    ax.axhline(0.10, color="gray", ls="--", lw=1, label="target GRPO − SFT: +0.10")
    if "fsft" in m:
        ax.axhline(0.05, color="#3aa17e", ls=":", lw=1, label="target GRPO − filtered SFT: +0.05")
    ax.set_xticks(range(len(GROUPS)), [g[1] for g in GROUPS], fontsize=8)
    ax.set_xlim(-0.5, len(GROUPS) - 0.1)
    ax.set_ylabel("paired difference in episode success (same tasks)")
    ax.set_title(f"Paired differences, 95% CI (n={m['n_eval_tasks']})")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8.5, frameon=False)


def _plot_mistakes(ax: Any, m: Mapping[str, Any], trained: list) -> None:
    """How often each teacher mistake shows in held-out episodes, per trained stage."""
    kinds = list(MISTAKES)
    bw = 0.8 / len(trained)
    for j, (key, label, color) in enumerate(trained):
        shares = [m[key]["mistake_share"].get(k, 0.0) for k in kinds]
        xs = [i + (j - (len(trained) - 1) / 2) * bw for i in range(len(kinds))]
        ax.bar(xs, shares, bw * 0.92, color=color, label=label.split(" (")[0])
        for x, s in zip(xs, shares, strict=True):
            ax.text(x, s + 0.01, f"{s:.2f}", ha="center", va="bottom", fontsize=6.5)
    rates = m["config"]["teacher_rates"]
    ax.set_xticks(
        range(len(kinds)),
        [f"{k}\n(teacher habit: {rates.get(k, 0):.0%}\nof episodes)" for k in kinds],
        fontsize=8,
    )
    ax.set_ylabel("share of held-out episodes showing it")
    ax.set_title("The teacher's mistakes: inherited, then unlearned?")
    ax.set_ylim(
        0,
        max(0.2, *[m[s[0]]["mistake_share"].get(k, 0) for s in trained for k in kinds]) + 0.1,
    )
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8, frameon=False)


def run_demo(out: Path, quick: bool = False, log=print, cfg: DemoConfig | None = None) -> dict[str, Any]:
    # lazy: torch loads only when a model is built or run; importing the demo stays light
    import torch

    torch.set_num_threads(1)
    cfg = cfg or (DemoConfig.quick() if quick else DemoConfig())
    out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    load_start = os.getloadavg()[0]
    last_cpu = [c0]

    def lap(name: str, since: float) -> float:
        # wall and CPU seconds per stage: torch runs one thread, so on idle cores the
        # wall time is about the CPU time; under load the two part [ours]
        seconds[name] = round(time.perf_counter() - since, 1)
        cpu[name] = round(time.process_time() - last_cpu[0], 1)
        last_cpu[0] = time.process_time()
        return time.perf_counter()

    tasks, train_tasks, eval_tasks = split_tasks(cfg)
    log(
        f"[1/6] generated {cfg.n_train} training and {cfg.n_eval} held-out tasks in the simulator; "
        f"{cfg.n_eval - len(eval_tasks)} held-out prompts repeat a training prompt and are dropped: "
        f"{len(eval_tasks)} held-out tasks"
    )
    amap = global_action_map(tasks)
    (out / "action_map.json").write_text(json.dumps({str(k): v for k, v in amap.items()}, indent=0))
    held = records(eval_tasks, amap)
    rates = ", ".join(f"{k} {v:.2f}" for k, v in cfg.teacher_rates.items())
    log(
        f"[2/6] the teacher (expert with mistake habits per episode: {rates}) plays the training and held-out tasks"
    )
    sft_recs, _ = teacher_episodes(train_tasks, amap, cfg)
    _, teacher_eval = teacher_episodes(eval_tasks, amap, cfg)
    metrics: dict[str, Any] = {
        "n_eval_tasks": len(held),
        "n_train_tasks": len(train_tasks),
        "n_eval_dropped_duplicates": cfg.n_eval - len(eval_tasks),
        "config": _plain(cfg),
    }
    metrics["n_sft_demos"] = len(sft_recs)
    metrics["teacher_mistakes_applied"] = _made_rates(teacher_eval)
    teacher_succ = [r["success"] for r in teacher_eval]
    metrics["teacher"] = first_plan_metrics([r["texts"][0] for r in teacher_eval], held, amap)
    metrics["teacher"]["mean_turns"] = sum(len(r["texts"]) for r in teacher_eval) / max(1, len(teacher_eval))
    metrics["teacher"].update(
        outcome_metrics(teacher_succ, [r["texts"] for r in teacher_eval], eval_tasks, cfg)
    )
    log(f"  teacher: {_fmt(metrics['teacher'])}")
    t = lap("teacher", t0)
    log(
        f"[3/6] building a {cfg.layers}-layer, {cfg.hidden}-wide transformer and a tokenizer trained on the task text"
    )
    texts = [r["prompt"] + r["completion"] for r in sft_recs if not r["turns"]]
    texts += [r["turns"][-1][1] + r["completion"] for r in sft_recs if r["turns"]]
    model, tokenizer = build_policy(texts, cfg.hidden, cfg.layers, cfg.seed)
    metrics["n_parameters"] = sum(p.numel() for p in model.parameters())
    metrics["untrained"], _ = evaluate_policy(model, tokenizer, held[: cfg.n_eval_untrained], amap, cfg)
    log(f"  untrained: {_fmt(metrics['untrained'])}")
    t = lap("untrained_eval", t)
    log(
        f"[4/6] SFT on the teacher's {len(sft_recs)} plans (every turn of its training episodes, mistakes included)"
    )
    losses = sft(model, tokenizer, sft_recs, cfg, log)
    t = lap("sft", t)
    metrics["sft"], sft_succ = evaluate_policy(model, tokenizer, held, amap, cfg)
    log(f"  SFT: {_fmt(metrics['sft'])}")
    t = lap("sft_eval", t)
    rl_tasks = [x for x in train_tasks if x.task_type in cfg.rl_task_types]
    # the filtered-SFT baseline starts from this same SFT checkpoint; GRPO trains `model` in place
    sft_model = copy.deepcopy(model) if cfg.fsft_rounds and cfg.grpo_steps else None
    log(
        f"[5/6] GRPO for {cfg.grpo_steps} steps with the environment in the loop on the {len(rl_tasks)} training "
        f"tasks of {len(cfg.rl_task_types)} task types ({cfg.grpo_batch} episodes per step, up to {cfg.max_turns} turns each)"
    )
    rl_recs: list[PromptTask] = [{"prompt": prompt(x), "task": x} for x in rl_tasks]
    grpo_stats: dict[str, int] = {}
    curve = grpo(model, tokenizer, rl_recs, cfg, out, log, grpo_stats) if cfg.grpo_steps else []
    metrics["grpo_episodes"] = grpo_stats.get("episodes", 0)
    t = lap("grpo", t)
    metrics["grpo"], grpo_succ = evaluate_policy(model, tokenizer, held, amap, cfg)
    log(f"  GRPO: {_fmt(metrics['grpo'])}")
    t = lap("grpo_eval", t)
    for suffix, (a, b) in _paired_parts(sft_succ, grpo_succ, eval_tasks, cfg).items():
        metrics[f"grpo_minus_sft{suffix}"] = round(sum(b) / len(b) - sum(a) / len(a), 4) if a else None
        metrics[f"grpo_minus_sft_ci95{suffix}"] = list(bootstrap_ci(a, b, seed=cfg.seed)) if a else None
    if sft_model is not None:
        log(
            f"[5b/6] filtered SFT from the same SFT checkpoint: {cfg.fsft_rounds} rounds of sampling "
            f"{metrics['grpo_episodes']} episodes in all (GRPO's count) on the same tasks, fine-tuning on the successes"
        )
        metrics["fsft_budget"] = filtered_sft(sft_model, tokenizer, rl_tasks, cfg, log)
        t = lap("filtered_sft", t)
        metrics["fsft"], fsft_succ = evaluate_policy(sft_model, tokenizer, held, amap, cfg)
        log(f"  filtered SFT: {_fmt(metrics['fsft'])}")
        t = lap("filtered_sft_eval", t)
        _paired_into(metrics, "grpo_minus_fsft", fsft_succ, grpo_succ, eval_tasks, cfg)
        _paired_into(metrics, "fsft_minus_sft", sft_succ, fsft_succ, eval_tasks, cfg)
        lo, hi = metrics["grpo_minus_fsft_ci95"]
        log(
            f"  GRPO - filtered SFT success: {metrics['grpo_minus_fsft']:+.3f} (paired 95% CI [{lo:+.3f}, {hi:+.3f}])"
        )
    metrics["grpo_minus_teacher"] = round(
        metrics["grpo"]["success_rate"] - metrics["teacher"]["success_rate"], 4
    )
    metrics["grpo_minus_teacher_ci95"] = list(bootstrap_ci(teacher_succ, grpo_succ, seed=cfg.seed))
    metrics["grpo_tasks_won_lost"] = [
        sum(g > s for s, g in zip(sft_succ, grpo_succ, strict=True)),
        sum(g < s for s, g in zip(sft_succ, grpo_succ, strict=True)),
    ]
    metrics["grpo_curve"] = curve
    episodes = cfg.grpo_steps * cfg.grpo_batch
    metrics["grpo_rollouts_per_second"] = (
        round(episodes / seconds["grpo"], 2) if seconds["grpo"] > 0 else None
    )
    metrics["grpo_seconds"] = seconds["grpo"]
    lo, hi = metrics["grpo_minus_sft_ci95"]
    log(
        f"  GRPO - SFT success: {metrics['grpo_minus_sft']:+.3f} (paired bootstrap 95% CI [{lo:+.3f}, {hi:+.3f}])"
    )
    log("[6/6] saving the planner and writing the report")
    save_planner(model, tokenizer, amap, cfg, out / "planner")
    plot_curve(curve, losses, out / "reward_curve.png", group=cfg.grpo_batch)
    plot_headline(metrics, out / "success.png")
    metrics["stage_seconds"] = seconds
    metrics["stage_cpu_seconds"] = cpu
    metrics["wall_seconds"] = round(time.perf_counter() - t0, 1)
    metrics["cpu_seconds"] = round(time.process_time() - c0, 1)
    metrics["load_average_1min"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    _report(out, metrics)
    return metrics


def save_planner(model, tokenizer, amap: dict[int, str], cfg: DemoConfig, path: Path) -> None:
    """The trained planner with what evaluating it again needs: the tokenizer, the action
    map its ids refer to, and the demo settings (which held-out tasks, how many turns)."""
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    (path / "action_map.json").write_text(json.dumps({str(k): v for k, v in amap.items()}, indent=0))
    (path / "demo_config.json").write_text(json.dumps(_plain(cfg), indent=2) + "\n")


def evaluate_saved_planner(path: Path, n_eval: int | None = None, log=print) -> StageMetrics:
    """Load a planner saved by :func:`run_demo` and play the held-out tasks of its run
    again (the first ``n_eval`` of them; all by default), greedy, in the same multi-turn
    loop: the same numbers as the run's GRPO row when nothing changed."""
    # lazy: torch and transformers load only when a saved planner is loaded
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    torch.set_num_threads(1)
    path = Path(path)
    if not (path / "demo_config.json").is_file():
        raise FileNotFoundError(f"{path} holds no planner saved by groundrl demo (no demo_config.json)")
    raw = json.loads((path / "demo_config.json").read_text())
    raw["rl_task_types"] = tuple(raw["rl_task_types"])
    cfg = DemoConfig(**raw)
    model = AutoModelForCausalLM.from_pretrained(path)
    # not AutoTokenizer: config.json says qwen2, which would load Qwen2's pre-tokenizer
    # and split text differently from the BPE the planner was trained with
    tokenizer = PreTrainedTokenizerFast.from_pretrained(path)
    tokenizer.padding_side = "left"
    amap = {int(k): v for k, v in json.loads((path / "action_map.json").read_text()).items()}
    held_tasks = split_tasks(cfg)[2][: n_eval or cfg.n_eval]  # deduplicated, as in run_demo
    log(f"evaluating {path} on {len(held_tasks)} held-out tasks of its run (seed {cfg.seed})")
    m, _ = evaluate_policy(model, tokenizer, records(held_tasks, amap), amap, cfg)
    return m


def _plain(cfg: DemoConfig) -> dict[str, object]:
    d = dict(cfg.__dict__)
    d["rl_task_types"] = list(cfg.rl_task_types)
    return d


def _made_rates(results: Sequence[TeacherEpisode]) -> dict[str, float]:
    """The share of the teacher's episodes in which it applied each mistake to a plan."""
    n = max(1, len(results))
    return {k: round(sum(any(k in m for m in r["made"]) for r in results) / n, 4) for k in MISTAKES}


def _paired_into(
    m: dict[str, Any], key: str, a: list[int], b: list[int], tasks: list, cfg: DemoConfig
) -> None:
    """``m[key]`` = mean(b) − mean(a) and ``m[key + "_ci95"]`` its paired bootstrap CI,
    overall and on the task types seen / never seen in RL (suffixes ``_rl_types`` /
    ``_new_types``)."""
    for suffix, (x, y) in _paired_parts(a, b, tasks, cfg).items():
        m[f"{key}{suffix}"] = round(sum(y) / len(y) - sum(x) / len(x), 4) if x else None
        m[f"{key}_ci95{suffix}"] = list(bootstrap_ci(x, y, seed=cfg.seed)) if x else None


def _paired_parts(a: list[int], b: list[int], tasks: list, cfg: DemoConfig) -> dict[str, tuple[list, list]]:
    parts_a, parts_b = split_by_rl(a, tasks, cfg.rl_task_types), split_by_rl(b, tasks, cfg.rl_task_types)
    return {"": (a, b), **{f"_{k}": (parts_a[k], parts_b[k]) for k in parts_a}}


def _fmt(m: StageMetrics) -> str:
    lo, hi = m["success_ci95"]
    return (
        f"format valid {m['format_valid']:.2f}, prefix accuracy {m['prefix_accuracy']:.2f}, "
        f"first-plan success {m['first_plan_success_rate']:.2f}, "
        f"episode success {m['success_rate']:.3f} [{lo:.3f}, {hi:.3f}]"
    )


def _verdict(lo: float, hi: float) -> str:
    if lo > 0:
        return "The interval lies above 0: GRPO with the environment in the loop improved success over SFT."
    if hi < 0:
        return "The interval lies below 0: GRPO made the policy worse than SFT in this run."
    return "The interval contains 0: this run shows no significant change from GRPO over SFT."


def _fsft_verdict(m: Mapping[str, Any]) -> str:
    """The report's paragraph on GRPO against the success-filtered SFT baseline."""
    if "fsft" not in m:
        return "(The filtered-SFT baseline did not run: `fsft_rounds` 0 or no GRPO steps.)"
    lo, hi = m["grpo_minus_fsft_ci95"]
    if lo > 0:
        verdict = "RL beat success-filtered imitation given the same rewarded episodes."
    elif hi < 0:
        verdict = "Success-filtered imitation beat RL given the same rewarded episodes."
    else:
        verdict = "The interval contains 0: success-filtered imitation matched RL here within the CI."
    return (
        f"**GRPO − filtered SFT: {_ci(m['grpo_minus_fsft'], m['grpo_minus_fsft_ci95'], True)}** (paired; "
        f"both from the same SFT checkpoint, {m['fsft_budget']['episodes']} vs {m['grpo_episodes']} simulator-scored "
        f"episodes). {verdict} On task types seen in RL: "
        f"{_ci(m['grpo_minus_fsft_rl_types'], m['grpo_minus_fsft_ci95_rl_types'], True)}; never seen in RL: "
        f"{_ci(m['grpo_minus_fsft_new_types'], m['grpo_minus_fsft_ci95_new_types'], True)}. "
        f"Filtered SFT − SFT: {_ci(m['fsft_minus_sft'], m['fsft_minus_sft_ci95'], True)}."
    )


def _fsft_setting(m: Mapping[str, Any]) -> str:
    """The report's setting line of the filtered-SFT baseline."""
    if "fsft" not in m:
        return "- **Filtered SFT**: not run."
    cfg, b = m["config"], m["fsft_budget"]
    per = ", ".join(f"{r['kept']}/{r['episodes']}" for r in b["rounds"])
    return (
        f"- **Filtered SFT** (rejection-sampling fine-tuning / expert iteration, `groundrl.demos.filtered_sft`): from the\n"
        f"  SFT checkpoint, {cfg['fsft_rounds']} rounds of: sample episodes on GRPO's training tasks exactly as its\n"
        f"  rollouts do (temperature {cfg['grpo_temperature']}, {cfg['num_generations']} per task, up to {cfg['max_turns']} turns),\n"
        f"  keep the successful ones (per round {per} succeeded), fine-tune on every turn of them\n"
        f"  ({b['records']} turns in all; {cfg['fsft_epochs']} epochs per round, peak lr {cfg['fsft_lr']}). Budget:\n"
        f"  {b['episodes']} simulator-scored episodes, GRPO's {m['grpo_episodes']}."
    )


def _ci(v: float | None, ci: list[float] | None, signed: bool = False) -> str:
    if v is None or ci is None:
        return "–"
    f = "+.3f" if signed else ".3f"
    return f"{v:{f}} [{ci[0]:{f}}, {ci[1]:{f}}]"


def _report_tables(m: Mapping[str, Any], stages: Sequence[str], names: dict[str, str]) -> tuple[str, str]:
    """The report's two table bodies: success per stage, and each teacher mistake's share."""
    cfg = m["config"]
    rows = "\n".join(
        f"| {names[k]} | **{_ci(m[k]['success_rate'], m[k]['success_ci95'])}** | "
        f"{_ci(m[k]['success_rate_rl_types'], m[k]['success_ci95_rl_types'])} | "
        f"{_ci(m[k]['success_rate_new_types'], m[k]['success_ci95_new_types'])} | "
        f"{m[k]['format_valid']:.3f} | {m[k]['first_plan_success_rate']:.3f} | {m[k]['mean_turns']:.2f} |"
        for k in stages
    )
    made = m["teacher_mistakes_applied"]
    mistakes = "\n".join(
        f"| `{k}` | {MISTAKES[k]} | {cfg['teacher_rates'].get(k, 0):.2f} ({made[k]:.3f} applied) | "
        + " | ".join(f"{m[s]['mistake_share'][k]:.3f}" for s in stages[1:])
        + " |"
        for k in MISTAKES
    )
    return rows, mistakes


def _report(out: Path, m: Mapping[str, Any]) -> None:
    cfg = m["config"]
    names = {
        "untrained": f"untrained (first {m['untrained']['n_eval_tasks']} tasks)",
        "teacher": "teacher",
        "sft": "SFT",
        "fsft": "SFT → filtered SFT",
        "grpo": "SFT → GRPO",
    }
    stages = [k for k in ("untrained", "teacher", "sft", "fsft", "grpo") if k in m]
    rows, mistakes = _report_tables(m, stages, names)
    lo, hi = m["grpo_minus_sft_ci95"]
    won, lost = m["grpo_tasks_won_lost"]
    rl_types, new_types = cfg["rl_task_types"], [t for t in DEMO_TASK_TYPES if t not in cfg["rl_task_types"]]
    text = f"""# groundrl demo: a planner that learns past its teacher with the environment in the loop

![held-out success per stage](success.png)

| policy | episode success, all held-out [95% CI] | task types seen in RL | task types never in RL | format valid | first-plan success | turns |
|---|---|---|---|---|---|---|
{rows}

**GRPO − SFT episode success: {_ci(m["grpo_minus_sft"], m["grpo_minus_sft_ci95"], True)}** (paired bootstrap 95% CI,
same {m["n_eval_tasks"]} held-out tasks; GRPO wins {won} tasks SFT failed and loses {lost}). {_verdict(lo, hi)}
On task types seen in RL: {_ci(m["grpo_minus_sft_rl_types"], m["grpo_minus_sft_ci95_rl_types"], True)}; on task types
never seen in RL: {_ci(m["grpo_minus_sft_new_types"], m["grpo_minus_sft_ci95_new_types"], True)}.
GRPO − teacher: {_ci(m["grpo_minus_teacher"], m["grpo_minus_teacher_ci95"], True)}.
{_fsft_verdict(m)}

**What the teacher gets wrong, and how often it survives** (share of held-out episodes whose trace shows the
mistake, `groundrl.sim.teacher.count_mistakes`; the models are greedy):

| mistake | what | teacher habit per episode (share of episodes where a plan carried it) | {" | ".join(names[s] + " episodes" for s in stages[1:])} |
|---|---|---|{"---|" * len(stages[1:])}
{mistakes}

## Setting

{m["n_train_tasks"]} training and {m["n_eval_tasks"]} held-out tasks generated in the simulator (base subset, six
single-object ALFRED task types; synthetic scenes, numbers not comparable with AI2-THOR's), seed {cfg["seed"]}; of
the {cfg["n_eval"]} held-out tasks drawn, {m["n_eval_dropped_duplicates"]} whose prompt repeats a training prompt were
dropped, so no stage is evaluated on a task it trained on.
Every stage plays the same EB-ALFRED episodes: up to {cfg["max_turns"]} turns — the policy plans, the simulator runs
the plan until an action fails, the policy sees that action's feedback and re-plans (30-step, 10-invalid budgets).

- **Teacher**: the A* expert planning from the live state; at the start of an episode each mistake becomes a habit
  with the rate above (`random.Random(f"{{seed}}:{{task id}}")`), applied to every plan of that episode it fits,
  re-plans included — the fallible distillation
  teacher of the Reinforced Reasoning paper [§3.2], whose own EB-ALFRED success is 51.3% [Table 1].
- **SFT** ({m["n_parameters"]:,}-parameter transformer from config, tokenizer trained on the task text): every turn of
  the teacher's {m["n_train_tasks"]} training episodes ({m["n_sft_demos"]} plans, mistakes and re-plans included, no
  filtering), {cfg["sft_epochs"]} epochs, batch {cfg["sft_batch"]}, peak lr {cfg["sft_lr"]}.
- **GRPO**: {len(m["grpo_curve"])} steps of TRL `GRPOTrainer` with `groundrl.train.multiturn.EnvRollout` as
  `rollout_func` on the training tasks of the task types {", ".join(rl_types)} only (never: {", ".join(new_types)});
  {cfg["grpo_batch"]} episodes per step ({cfg["num_generations"]} per task), reward = the episode's progress +
  success bonus, feedback tokens masked out of the loss; rollouts at temperature {cfg["grpo_temperature"]}, lr
  {cfg["grpo_lr"]}, no KL term, embeddings {"frozen" if cfg["grpo_freeze_embeddings"] else "trained"}. {m["grpo_rollouts_per_second"]} episodes/s. Curves: `reward_curve.png`.
{_fsft_setting(m)}
- *format valid* / *first-plan success*: the first plan alone (full format reward 0.5; the plan executed from the
  initial state meets every goal); *episode success*: every goal condition met by the end of the episode. CIs are
  percentile bootstraps over tasks (2000 resamples, seeded).
- The trained planner is saved in `planner/` (transformers `save_pretrained`, with its tokenizer); its action ids are
  in `action_map.json`.

Wall time: {m["wall_seconds"]} s (stages: {", ".join(f"{k} {v} s" for k, v in m["stage_seconds"].items())}); CPU time
{m["cpu_seconds"]} s (one torch thread: about the wall time on idle cores); 1-minute load average
{m["load_average_1min"][0]} at the start, {m["load_average_1min"][1]} at the end.
"""
    (out / "report.md").write_text(text)
