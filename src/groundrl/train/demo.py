"""``groundrl demo``: the main job on built-in defaults, CPU only, no downloads.

1. generate household planning tasks in the simulator (train and held-out, seeded);
2. build a small transformer from config with a tokenizer trained on the task text;
3. SFT it from scratch on the expert's plans in the Reinforced-Reasoning JSON format;
4. GRPO it with the environment in the loop through TRL's ``GRPOTrainer``
   (:class:`groundrl.train.multiturn.EnvRollout` as ``rollout_func``): the policy
   writes a plan, the household environment runs it, and on a failed action the
   policy sees the EB-ALFRED feedback and re-plans (up to ``max_turns`` turns); the
   episode's reward (progress + success bonus, :func:`groundrl.sim.reward.sim_reward`
   of everything it ran) is the GRPO reward;
5. evaluate untrained / SFT / GRPO on the same held-out tasks with the same
   multi-turn loop, greedy — format validity and prefix accuracy of the first plan,
   first-plan success, and episode success — with bootstrap 95% intervals and the
   paired bootstrap interval of GRPO − SFT success, and write ``report.md``,
   ``reward_curve.png`` and ``metrics.json``.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.rewards.planning import reinforced_accuracy, reinforced_format
from groundrl.sim.execute import execute
from groundrl.sim.generate import generate_tasks
from groundrl.train.multiturn import EnvRollout, env_reward_funcs
from groundrl.train.planning_data import global_action_map, records, replan_records


@dataclass
class DemoConfig:
    n_train: int = 1200
    # 1000 held-out tasks (evaluation is cheap next to training: ~30 s per trained stage):
    # on 300 the paired CI of a +0.02 gain is about ±0.025 and touches 0
    n_eval: int = 1000
    # SFT budget: 6 epochs, short of convergence on purpose (loss ≈0.04; greedy episode
    # success 0.675 on the 1000 held-out tasks vs 0.742 at 8 epochs and 0.33 at 4): from
    # 8 epochs GRPO's gain is +0.008 [-0.004, +0.020]; see docs/sim.md
    sft_epochs: int = 6
    sft_batch: int = 32
    sft_lr: float = 2e-3
    replan_frac: float = 0.5  # re-planning demonstrations per training task (see replan_records)
    grpo_steps: int = 250
    grpo_batch: int = 32  # episodes per step (grpo_batch / num_generations prompts)
    num_generations: int = 8
    # lr 1e-4 with rollouts at temperature 0.7 (closer to the greedy policy that is
    # evaluated); measured on seed 0: +0.025 [+0.006, +0.043] vs +0.013 [-0.001, +0.027]
    # at lr 5e-5 / temperature 1; lr >= 2e-4 made success worse (-0.013 to -0.09)
    grpo_lr: float = 1e-4
    grpo_warmup_ratio: float = 0.0  # linear warm-up, a share of the GRPO steps
    grpo_scale_rewards: str = "group"  # TRL: "group" (GRPO's std scaling) or "none" (Dr. GRPO)
    grpo_temperature: float = 0.7  # sampling temperature of the GRPO rollouts
    grpo_freeze_embeddings: bool = (
        True  # GRPO trains the transformer blocks; the (tied) embeddings stay as SFT left them
    )
    max_turns: int = 3  # policy turns per episode: the first plan and up to 2 re-plans
    hidden: int = 128
    layers: int = 2
    max_new_tokens: int = 80
    seed: int = 0

    @classmethod
    def quick(cls) -> DemoConfig:
        return cls(
            n_train=300,
            n_eval=24,
            sft_epochs=10,
            grpo_steps=6,
            grpo_batch=8,
            num_generations=4,
            hidden=96,
            layers=2,
            sft_lr=3e-3,
        )


DEMO_TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_two_obj_and_place",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
)


def demo_tasks(n: int, seed: int) -> list:
    """Base-subset tasks of the six single-object ALFRED types (no slicing, no movable
    receptacle: plans of 3–12 steps a small model can learn in minutes)."""
    out, s = [], seed
    while len(out) < n:
        for t in generate_tasks(64, seed=s, subsets=["base"]):
            if t.task_type in DEMO_TASK_TYPES and len(out) < n:
                out.append(t)
        s += 1
    return out


def build_policy(texts: list[str], hidden: int, layers: int, seed: int):
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


def sft(model, tokenizer, recs: list[dict[str, Any]], cfg: DemoConfig, log) -> list[float]:
    """Completion-only cross-entropy on (context, expert completion) pairs; a record's
    ``turns`` (earlier plans and the environment's feedback) are context."""
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
        rng.shuffle(pairs)
        for b in range(0, len(pairs), cfg.sft_batch):
            batch = pairs[b : b + cfg.sft_batch]
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


def generate(model, tokenizer, prompts: list[str], max_new_tokens: int, batch: int = 32) -> list[str]:
    import torch

    out = []
    for b in range(0, len(prompts), batch):
        enc = tokenizer(prompts[b : b + batch], return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            ids = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False)
        out.extend(tokenizer.batch_decode(ids[:, enc["input_ids"].shape[1] :], skip_special_tokens=True))
    return out


def greedy(model, tokenizer, contexts: list[list[int]], max_new_tokens: int, trainer=None, batch: int = 300):
    """Greedy continuations of token-id contexts (left-padded batches), padding removed."""
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
        out.extend([t for t in row if t != pad] for row in gen[:, width:].tolist())
    return out


def evaluate_policy(
    model, tokenizer, recs: list[dict[str, Any]], amap: dict[int, str], cfg: DemoConfig
) -> tuple[dict[str, Any], list[int]]:
    """Greedy EB-ALFRED episodes of up to ``cfg.max_turns`` turns on every record's task.
    Returns the stage's metrics and the per-task episode success (0/1, for the paired
    bootstrap). ``format_valid`` / ``prefix_accuracy`` / ``first_plan_success_rate``
    judge the first plan alone; ``success_rate`` the whole episode with re-planning."""
    model.eval()
    rollout = EnvRollout({r["prompt"]: r["task"] for r in recs}, max_turns=cfg.max_turns, generate_fn=greedy)
    episodes = rollout.play(model, tokenizer, [r["prompt"] for r in recs], cfg.max_new_tokens)
    first = [e.texts[0] if e.texts else "" for e in episodes]
    fmt = [reinforced_format(c, amap).value for c in first]
    acc = [reinforced_accuracy(c, r["gold"]).value for c, r in zip(first, recs, strict=True)]
    first_succ = [execute(r["task"], c).success for c, r in zip(first, recs, strict=True)]
    succ = [int(e.success) for e in episodes]
    n = len(recs)
    lo, hi = bootstrap_ci(succ, seed=cfg.seed)
    return {
        "format_valid": sum(f >= 0.5 - 1e-9 for f in fmt) / n,
        "prefix_accuracy": sum(max(0.0, a) for a in acc) / n,
        "success_rate": sum(succ) / n,
        "success_ci95": [lo, hi],
        "first_plan_success_rate": sum(first_succ) / n,
        "mean_turns": sum(e.turns for e in episodes) / n,
        "mean_progress": sum(e.progress for e in episodes) / n,
        "n_eval_tasks": n,
        "mean_format_reward": sum(fmt) / n,
        "example": first[0],  # whole (max_new_tokens bounds it): a cut JSON plan misleads
    }, succ


def sampled_success(
    model, tokenizer, recs: list[dict[str, Any]], cfg: DemoConfig, seed: int
) -> tuple[dict[str, Any], list[int]]:
    """Episode success when the policy *samples* (temperature 1, as GRPO's rollouts do;
    ``torch.manual_seed(seed)`` first, so two policies see the same random stream)."""
    import torch

    model.eval()
    torch.manual_seed(seed)
    rollout = EnvRollout(
        {r["prompt"]: r["task"] for r in recs}, max_turns=cfg.max_turns, generate_fn=EnvRollout.sample
    )
    episodes = rollout.play(model, tokenizer, [r["prompt"] for r in recs], cfg.max_new_tokens)
    succ = [int(e.success) for e in episodes]
    n = max(1, len(succ))
    return {
        "sampled_success_rate": sum(succ) / n,
        "sampled_success_ci95": list(bootstrap_ci(succ, seed=seed)),
    }, succ


def seen_split(succ: list[int], seen: list[bool]) -> dict[str, float | None]:
    """Episode success on the held-out tasks whose instruction also occurs in training
    (a new scene for a known instruction) and on the rest (a new instruction).

    >>> seen_split([1, 0, 1], [True, True, False])
    {'success_rate_seen_instruction': 0.5, 'success_rate_new_instruction': 1.0}
    """
    out: dict[str, float | None] = {}
    for key, want in (("seen", True), ("new", False)):
        xs = [s for s, k in zip(succ, seen, strict=True) if k is want]
        out[f"success_rate_{key}_instruction"] = round(sum(xs) / len(xs), 4) if xs else None
    return out


def bootstrap_ci(
    xs: list[int] | list[float],
    ys: list[int] | list[float] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of ``mean(xs)`` — or, with ``ys``, of the paired
    difference ``mean(ys) - mean(xs)`` (tasks resampled with replacement, the same tasks
    for both policies), ``n_boot`` resamples drawn with ``numpy.random.default_rng(seed)``.

    >>> bootstrap_ci([1, 1, 1, 1])
    (1.0, 1.0)
    >>> bootstrap_ci([0, 0, 0, 0], [1, 1, 1, 1])
    (1.0, 1.0)
    """
    import numpy as np

    a = np.asarray(xs, dtype=float)
    d = a if ys is None else np.asarray(ys, dtype=float) - a
    if d.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (round(float(lo), 4), round(float(hi), 4))


def grpo(
    model, tokenizer, recs: list[dict[str, Any]], cfg: DemoConfig, out: Path, log
) -> list[dict[str, Any]]:
    """GRPO with the environment in the loop: TRL's ``GRPOTrainer`` with
    :class:`~groundrl.train.multiturn.EnvRollout` as ``rollout_func`` (multi-turn
    episodes, re-planning on feedback) and the episode's environment reward."""
    import os

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    funcs, weights = env_reward_funcs()
    rollout = EnvRollout({r["prompt"]: r["task"] for r in recs}, max_turns=cfg.max_turns)
    ds = Dataset.from_list([{"prompt": r["prompt"]} for r in recs])
    args = GRPOConfig(
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
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=funcs,
        args=args,
        train_dataset=ds,
        rollout_func=rollout,
    )
    emb = model.get_input_embeddings().weight
    emb.requires_grad_(not cfg.grpo_freeze_embeddings)
    model.train()
    try:
        trainer.train()
    finally:
        emb.requires_grad_(True)
    logs = [h for h in trainer.state.log_history if "reward" in h]
    per_batch = max(1, args.num_iterations * args.steps_per_generation)
    curve = [
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
    for c in curve:
        log(
            f"  GRPO step {c['step']}: episode reward {c['reward']:.3f}, success {c['success']:.3f}, "
            f"turns {c['turns'] if c['turns'] is None else round(c['turns'], 2)}"
        )
    model.eval()
    grpo_dir = out / "grpo"  # TRL's output_dir: nothing is saved there (save_strategy "no")
    if grpo_dir.is_dir() and not any(grpo_dir.iterdir()):
        grpo_dir.rmdir()
    return curve


def plot_curve(curve: list[dict[str, Any]], sft_losses: list[float], path: Path, group: int = 0) -> None:
    """SFT loss per step (left) and, per GRPO step (right), the mean episode reward with an
    approximate 95% CI band (mean ± 1.96·std/√n over the step's ``group`` episodes) and
    the episode success rate. Legends sit below the axes, off the data."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2))
    axes[0].plot(range(1, len(sft_losses) + 1), sft_losses, color="tab:gray", label="SFT loss")
    axes[0].set_title("SFT on expert plans")
    axes[0].set_xlabel("optimisation step")
    axes[0].set_ylabel("cross-entropy loss (per token)")
    axes[0].set_ylim(bottom=0)
    axes[0].grid(alpha=0.3)
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, fontsize=8, frameon=False)
    ax = axes[1]
    steps = [c["step"] for c in curve]
    nan = float("nan")
    for key, color, label, style, width, z in (
        ("success", "tab:orange", "episode success rate (max 1)", "--", 1.6, 3),
        ("reward", "tab:blue", "episode reward: progress + success bonus (max 2)", "-", 2.4, 2),
    ):  # the reward is drawn wide underneath, so the success line equal to it stays visible
        ys = [c[key] if c.get(key) is not None else nan for c in curve]
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
        mean = [c["reward"] if c.get("reward") is not None else nan for c in curve]
        ax.fill_between(
            steps,
            [m - h for m, h in zip(mean, half, strict=True)],
            [m + h for m, h in zip(mean, half, strict=True)],
            color="tab:blue",
            alpha=0.15,
            label=f"reward: ≈95% CI of the step mean (n={group})",
        )
    ax.set_title("GRPO, environment in the loop (multi-turn)")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(f"mean per step{f' (n={group} episodes)' if group else ''}")
    vals = [c["reward"] for c in curve if c.get("reward") is not None]
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


def run_demo(out: Path, quick: bool = False, log=print, cfg: DemoConfig | None = None) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    cfg = cfg or (DemoConfig.quick() if quick else DemoConfig())
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    log(f"[1/5] generating {cfg.n_train} training and {cfg.n_eval} held-out tasks in the simulator")
    tasks = demo_tasks(cfg.n_train + cfg.n_eval, cfg.seed)
    train_tasks, eval_tasks = tasks[: cfg.n_train], tasks[cfg.n_train :]
    amap = global_action_map(tasks)
    (out / "action_map.json").write_text(json.dumps({str(k): v for k, v in amap.items()}, indent=0))
    train, held = records(train_tasks, amap), records(eval_tasks, amap)
    n_replan = round(cfg.replan_frac * len(train_tasks))
    replans = replan_records(train_tasks[:n_replan], amap, seed=cfg.seed)
    log(
        f"[2/5] building a {cfg.layers}-layer, {cfg.hidden}-wide transformer and a tokenizer trained on the task text"
    )
    texts = [r["prompt"] + r["completion"] for r in train]
    texts += [r["turns"][0][1] + r["completion"] for r in replans]
    model, tokenizer = build_policy(texts, cfg.hidden, cfg.layers, cfg.seed)
    metrics: dict[str, Any] = {
        "n_eval_tasks": len(held),
        "n_train_tasks": len(train),
        "n_replan_demos": len(replans),
        "config": cfg.__dict__,
        "n_parameters": sum(p.numel() for p in model.parameters()),
    }
    # Held-out tasks are new scenes; the generator's instruction space is small, so some
    # repeat a training task's instruction. Success is also reported on each part.
    train_instructions = {t.instruction for t in train_tasks}
    seen = [t.instruction in train_instructions for t in eval_tasks]
    metrics["n_eval_instruction_seen_in_training"] = sum(seen)
    metrics["untrained"], untrained_succ = evaluate_policy(model, tokenizer, held, amap, cfg)
    metrics["untrained"].update(seen_split(untrained_succ, seen))
    log(f"  untrained: {_fmt(metrics['untrained'])}")
    log(f"[3/5] SFT on {len(train)} expert plans and {len(replans)} re-planning demonstrations")
    losses = sft(model, tokenizer, train + replans, cfg, log)
    metrics["sft"], sft_succ = evaluate_policy(model, tokenizer, held, amap, cfg)
    metrics["sft"].update(seen_split(sft_succ, seen))
    extra, sft_sampled = sampled_success(model, tokenizer, held, cfg, seed=cfg.seed + 1)
    metrics["sft"].update(extra)
    log(f"  SFT: {_fmt(metrics['sft'])}")
    log(
        f"[4/5] GRPO for {cfg.grpo_steps} steps with the environment in the loop "
        f"({cfg.grpo_batch} episodes per step, up to {cfg.max_turns} turns each)"
    )
    t_grpo = time.perf_counter()
    curve = grpo(model, tokenizer, train, cfg, out, log)
    grpo_seconds = time.perf_counter() - t_grpo
    metrics["grpo"], grpo_succ = evaluate_policy(model, tokenizer, held, amap, cfg)
    metrics["grpo"].update(seen_split(grpo_succ, seen))
    extra, grpo_sampled = sampled_success(model, tokenizer, held, cfg, seed=cfg.seed + 1)
    metrics["grpo"].update(extra)
    log(f"  GRPO: {_fmt(metrics['grpo'])}")
    metrics["grpo_minus_sft_success"] = round(
        metrics["grpo"]["success_rate"] - metrics["sft"]["success_rate"], 4
    )
    metrics["grpo_minus_sft_success_ci95"] = list(bootstrap_ci(sft_succ, grpo_succ, seed=cfg.seed))
    metrics["grpo_minus_sft_sampled_success"] = round(
        metrics["grpo"]["sampled_success_rate"] - metrics["sft"]["sampled_success_rate"], 4
    )
    metrics["grpo_minus_sft_sampled_success_ci95"] = list(
        bootstrap_ci(sft_sampled, grpo_sampled, seed=cfg.seed)
    )
    metrics["grpo_tasks_won_lost"] = [
        sum(g > s for s, g in zip(sft_succ, grpo_succ, strict=True)),
        sum(g < s for s, g in zip(sft_succ, grpo_succ, strict=True)),
    ]
    metrics["grpo_curve"] = curve
    episodes = cfg.grpo_steps * cfg.grpo_batch
    metrics["grpo_rollouts_per_second"] = round(episodes / grpo_seconds, 2) if grpo_seconds > 0 else None
    metrics["grpo_seconds"] = round(grpo_seconds, 1)
    metrics["wall_seconds"] = round(time.perf_counter() - t0, 1)
    lo, hi = metrics["grpo_minus_sft_success_ci95"]
    log(
        f"  GRPO - SFT success: {metrics['grpo_minus_sft_success']:+.3f} (paired bootstrap 95% CI [{lo:+.3f}, {hi:+.3f}])"
    )
    log("[5/5] writing the report")
    plot_curve(curve, losses, out / "reward_curve.png", group=cfg.grpo_batch)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    _report(out, metrics)
    return metrics


def _fmt(m: dict[str, Any]) -> str:
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


def _seen_line(m: dict[str, Any]) -> str:
    k, n = m.get("n_eval_instruction_seen_in_training"), m["n_eval_tasks"]
    if k is None:
        return ""

    def pair(stage: str) -> str:
        a, b = m[stage].get("success_rate_seen_instruction"), m[stage].get("success_rate_new_instruction")
        return f"{stage} {'–' if a is None else f'{a:.3f}'} / {'–' if b is None else f'{b:.3f}'}"

    return (
        f"Held-out tasks are new scenes; {k} of the {n} repeat the instruction of a training task (the generator's "
        f"instruction space is small), the other {n - k} have an instruction never seen in training. Episode "
        f"success on those two parts (seen / new instruction): {pair('sft')}; {pair('grpo')}."
    )


def _report(out: Path, m: dict[str, Any]) -> None:
    cfg = m["config"]

    def sampled(k: str) -> str:
        if "sampled_success_rate" not in m[k]:
            return "–"
        a, b = m[k]["sampled_success_ci95"]
        return f"{m[k]['sampled_success_rate']:.3f} [{a:.3f}, {b:.3f}]"

    rows = "\n".join(
        f"| {k} | {m[k]['format_valid']:.3f} | {m[k]['prefix_accuracy']:.3f} | "
        f"{m[k]['first_plan_success_rate']:.3f} | **{m[k]['success_rate']:.3f}** "
        f"[{m[k]['success_ci95'][0]:.3f}, {m[k]['success_ci95'][1]:.3f}] | {m[k]['mean_turns']:.2f} | {sampled(k)} |"
        for k in ("untrained", "sft", "grpo")
    )
    lo, hi = m["grpo_minus_sft_success_ci95"]
    slo, shi = m.get("grpo_minus_sft_sampled_success_ci95", (float("nan"), float("nan")))
    won, lost = m["grpo_tasks_won_lost"]
    text = f"""# groundrl demo: a household planner trained from scratch, then with the environment in the loop

{m["n_train_tasks"]} training and {m["n_eval_tasks"]} held-out tasks generated in the simulator (base subset,
six single-object ALFRED task types; scenes are synthetic, numbers are not comparable with AI2-THOR's).
Policy: {m["n_parameters"]:,}-parameter transformer built from config; tokenizer trained on the task text.
Output: Reinforced-Reasoning JSON plans. Every stage is evaluated the same way: greedy EB-ALFRED episodes of
up to {cfg["max_turns"]} turns — the policy plans, the simulator runs the plan until an action fails, the
policy sees that action's feedback and re-plans.

| policy | format valid | prefix accuracy | first-plan success | episode success [95% CI] | turns | sampled episode success [95% CI] |
|---|---|---|---|---|---|---|
{rows}

**GRPO − SFT episode success: {m["grpo_minus_sft_success"]:+.3f}, paired bootstrap 95% CI [{lo:+.3f}, {hi:+.3f}]**
(same {m["n_eval_tasks"]} tasks for both; GRPO succeeds where SFT failed on {won} tasks and fails where SFT
succeeded on {lost}). {_verdict(lo, hi)}

{_seen_line(m)}

*Sampled* episode success (temperature 1, same random seed for SFT and GRPO; GRPO's rollouts sample at temperature {cfg["grpo_temperature"]}):
GRPO − SFT {m.get("grpo_minus_sft_sampled_success", float("nan")):+.3f}, paired 95% CI [{slo:+.3f}, {shi:+.3f}].
Greedy success (the headline, `success_rate`) changes only where RL moves the most likely plan; sampled success
also rises when RL only sharpens the distribution toward plans greedy decoding already wrote.

- *format valid* / *prefix accuracy* / *first-plan success*: the first plan alone (full format reward 0.5;
  mean `c(c+1)/(T(T+1))` against the expert plan; the plan executed from the initial state meets every goal);
- *episode success*: the multi-turn episode ends with every goal condition met (30-step, 10-invalid budgets);
  CIs are percentile bootstraps over tasks (2000 resamples, seeded).

**Training.** SFT: {cfg["sft_epochs"]} epochs (the default 6 stop short of convergence so that RL has room;
`docs/sim.md` gives what GRPO adds to a longer SFT), batch {cfg["sft_batch"]}, peak lr {cfg["sft_lr"]}, on
{m["n_train_tasks"]} expert plans plus {m["n_replan_demos"]} re-planning demonstrations (the expert plan with one
step dropped is run; the target is the expert's plan from where it failed, after the environment's feedback).
GRPO: {len(m["grpo_curve"])} steps of TRL `GRPOTrainer` with `groundrl.train.multiturn.EnvRollout` as
`rollout_func` — {cfg["grpo_batch"]} episodes per step ({cfg["num_generations"]} per task), up to
{cfg["max_turns"]} turns, reward = the episode's progress + success bonus (`sim_reward` of everything it ran),
feedback tokens masked out of the loss; rollouts at temperature {cfg["grpo_temperature"]}, lr {cfg["grpo_lr"]}, no KL term. {m["grpo_rollouts_per_second"]} episodes/s
during GRPO ({m["grpo_seconds"]} s). Curve: `reward_curve.png`.
Wall time: {m["wall_seconds"]} s.
"""
    (out / "report.md").write_text(text)
