"""``groundrl demo``: the main job on built-in defaults, CPU only, no downloads.

1. generate household planning tasks in the simulator (train and held-out, seeded);
2. build a small transformer from config with a tokenizer trained on the task text;
3. SFT it from scratch on the expert's plans in the Reinforced-Reasoning JSON format;
4. GRPO it with the ``reinforced_planning`` rubric (format + prefix accuracy) through
   TRL's ``GRPOTrainer``, online accuracy filtering on;
5. evaluate untrained / SFT / GRPO on the same held-out tasks — format validity, prefix
   accuracy, and task success when the plan is executed in the simulator — and write
   ``report.md``, ``reward_curve.png`` and ``metrics.json``.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.integrations.trl import reward_funcs
from groundrl.recipes import get_recipe
from groundrl.rewards.planning import reinforced_accuracy, reinforced_format
from groundrl.sim.execute import execute
from groundrl.sim.generate import generate_tasks
from groundrl.train.online_filter import AccuracyRecorder, filtering_trainer_class
from groundrl.train.planning_data import global_action_map, records


@dataclass
class DemoConfig:
    n_train: int = 1200
    n_eval: int = 60
    sft_epochs: int = 12
    sft_batch: int = 32
    sft_lr: float = 2e-3
    grpo_steps: int = 40
    grpo_batch: int = 8  # completions per step (num_generations per prompt)
    num_generations: int = 4
    grpo_lr: float = 5e-5
    hidden: int = 192
    layers: int = 4
    max_new_tokens: int = 80
    seed: int = 0

    @classmethod
    def quick(cls) -> DemoConfig:
        return cls(n_train=300, n_eval=24, sft_epochs=8, grpo_steps=6, hidden=96, layers=2, sft_lr=3e-3)


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
    """Completion-only cross-entropy on (prompt, expert completion) pairs."""
    import torch

    rng = random.Random(cfg.seed)
    pairs = []
    for r in recs:
        p = tokenizer(r["prompt"], add_special_tokens=False)["input_ids"]
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


def evaluate_policy(
    model, tokenizer, recs: list[dict[str, Any]], amap: dict[int, str], max_new_tokens: int
) -> dict[str, float]:
    completions = generate(model, tokenizer, [r["prompt"] for r in recs], max_new_tokens)
    fmt = [reinforced_format(c, amap).value for c in completions]
    acc = [reinforced_accuracy(c, r["gold"]).value for c, r in zip(completions, recs, strict=True)]
    succ = [execute(r["task"], c).success for c, r in zip(completions, recs, strict=True)]
    n = len(recs)
    return {
        "format_valid": sum(f >= 0.5 - 1e-9 for f in fmt) / n,
        "prefix_accuracy": sum(max(0.0, a) for a in acc) / n,
        "success_rate": sum(succ) / n,
        "mean_format_reward": sum(fmt) / n,
        "example": completions[0],  # whole (max_new_tokens bounds it): a cut JSON plan misleads
    }


def grpo(
    model, tokenizer, recs: list[dict[str, Any]], amap: dict[int, str], cfg: DemoConfig, out: Path, log
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    from datasets import Dataset
    from trl import GRPOConfig

    funcs, weights = reward_funcs(get_recipe("reinforced_planning").rubric(action_map=amap))
    recorder = AccuracyRecorder(funcs[1])
    funcs = [funcs[0], recorder]
    ds = Dataset.from_list([{"prompt": r["prompt"], "gold": r["gold"]} for r in recs])
    args = GRPOConfig(
        output_dir=str(out / "grpo"),
        use_cpu=True,
        bf16=False,
        learning_rate=cfg.grpo_lr,
        max_steps=cfg.grpo_steps,
        per_device_train_batch_size=cfg.grpo_batch,
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_new_tokens,
        temperature=1.0,
        beta=0.0,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        reward_weights=weights,
        seed=cfg.seed,
        disable_tqdm=True,
    )
    trainer = filtering_trainer_class()(
        model=model,
        processing_class=tokenizer,
        reward_funcs=funcs,
        args=args,
        train_dataset=ds,
        accuracy_recorder=recorder,
    )
    trainer.train()
    curve = [
        {
            "step": h["step"],
            "reward": h.get("reward"),
            "reward_std": h.get("reward_std"),
            "format": h.get("rewards/format/mean"),
            "accuracy": h.get("rewards/accuracy/mean"),
            "kept_frac": h.get("online_filter/kept_frac"),
        }
        for h in trainer.state.log_history
        if "reward" in h
    ]
    for c in curve:
        log(
            f"  GRPO step {c['step']}: reward {c['reward']:.3f} (format {c['format']:.3f}, accuracy {c['accuracy']:.3f}), groups kept {c['kept_frac']}"
        )
    model.eval()
    grpo_dir = out / "grpo"  # TRL's output_dir: nothing is saved there (save_strategy "no")
    if grpo_dir.is_dir() and not any(grpo_dir.iterdir()):
        grpo_dir.rmdir()
    return curve, {"seen": trainer.filter_seen, "kept": trainer.filter_kept}


def plot_curve(curve: list[dict[str, Any]], sft_losses: list[float], path: Path, group: int = 0) -> None:
    """SFT loss per step (left) and the GRPO step means of the rewards (right): total with
    an approximate 95% CI band (mean ± 1.96·std/√n over the step's ``group`` completions),
    format and accuracy. Legends sit below the axes, off the data."""
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
        ("format", "tab:green", "format reward (max 0.5)", "--", 1.3, 3),
        ("accuracy", "tab:orange", "prefix accuracy reward (max 1)", ":", 1.6, 3),
        ("reward", "tab:blue", "total reward (format + accuracy)", "-", 2.4, 2),
    ):  # the total is drawn wide underneath, so a part equal to it does not hide it
        ys = [c[key] if c.get(key) is not None else nan for c in curve]
        ax.plot(steps, ys, label=label, color=color, marker=".", ls=style, lw=width, zorder=z)
    if group > 1 and any(c.get("reward_std") is not None for c in curve):
        half = [1.96 * (c.get("reward_std") or 0.0) / math.sqrt(group) for c in curve]
        mean = [c["reward"] if c.get("reward") is not None else nan for c in curve]
        ax.fill_between(
            steps,
            [m - h for m, h in zip(mean, half, strict=True)],
            [m + h for m, h in zip(mean, half, strict=True)],
            color="tab:blue",
            alpha=0.15,
            label=f"total: ≈95% CI of the step mean (n={group})",
        )
    ax.set_title("GRPO (reinforced_planning rubric)")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(f"mean reward per step{f' (n={group} completions)' if group else ''}")
    vals = [c["reward"] for c in curve if c.get("reward") is not None]
    ax.set_ylim(min([0.0, *[v - 0.1 for v in vals]]), min(1.6, max([0.6, *[v + 0.3 for v in vals]])))
    if steps:
        ax.set_xticks(steps if len(steps) <= 12 else steps[:: max(1, len(steps) // 10)])
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run_demo(out: Path, quick: bool = False, log=print) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    cfg = DemoConfig.quick() if quick else DemoConfig()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    log(f"[1/5] generating {cfg.n_train} training and {cfg.n_eval} held-out tasks in the simulator")
    tasks = demo_tasks(cfg.n_train + cfg.n_eval, cfg.seed)
    train_tasks, eval_tasks = tasks[: cfg.n_train], tasks[cfg.n_train :]
    amap = global_action_map(tasks)
    (out / "action_map.json").write_text(json.dumps({str(k): v for k, v in amap.items()}, indent=0))
    train, held = records(train_tasks, amap), records(eval_tasks, amap)
    log(
        f"[2/5] building a {cfg.layers}-layer, {cfg.hidden}-wide transformer and a tokenizer trained on the task text"
    )
    model, tokenizer = build_policy(
        [r["prompt"] + r["completion"] for r in train], cfg.hidden, cfg.layers, cfg.seed
    )
    metrics: dict[str, Any] = {
        "n_eval_tasks": len(held),
        "n_train_tasks": len(train),
        "config": cfg.__dict__,
        "n_parameters": sum(p.numel() for p in model.parameters()),
    }
    metrics["untrained"] = evaluate_policy(model, tokenizer, held, amap, cfg.max_new_tokens)
    log(f"  untrained: {_fmt(metrics['untrained'])}")
    log(f"[3/5] SFT on {len(train)} expert plans")
    losses = sft(model, tokenizer, train, cfg, log)
    metrics["sft"] = evaluate_policy(model, tokenizer, held, amap, cfg.max_new_tokens)
    log(f"  SFT: {_fmt(metrics['sft'])}")
    log(f"[4/5] GRPO for {cfg.grpo_steps} steps with the reinforced_planning rubric, online filtering on")
    curve, filt = grpo(model, tokenizer, train, amap, cfg, out, log)
    metrics["grpo"] = evaluate_policy(model, tokenizer, held, amap, cfg.max_new_tokens)
    log(f"  GRPO: {_fmt(metrics['grpo'])}")
    metrics["grpo_curve"] = curve
    metrics["online_filter"] = filt
    metrics["wall_seconds"] = round(time.perf_counter() - t0, 1)
    log("[5/5] writing the report")
    plot_curve(curve, losses, out / "reward_curve.png", group=cfg.grpo_batch)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    _report(out, metrics)
    return metrics


def _fmt(m: dict[str, Any]) -> str:
    return f"format valid {m['format_valid']:.2f}, prefix accuracy {m['prefix_accuracy']:.2f}, task success {m['success_rate']:.2f}"


def _report(out: Path, m: dict[str, Any]) -> None:
    rows = "\n".join(
        f"| {k} | {m[k]['format_valid']:.3f} | {m[k]['prefix_accuracy']:.3f} | {m[k]['success_rate']:.3f} |"
        for k in ("untrained", "sft", "grpo")
    )
    text = f"""# groundrl demo: a household planner trained from scratch

{m["n_train_tasks"]} training and {m["n_eval_tasks"]} held-out tasks generated in the simulator (base subset,
six single-object ALFRED task types). Policy: {m["n_parameters"]:,}-parameter transformer built from
config; tokenizer trained on the task text. Output: Reinforced-Reasoning JSON plans.

| policy | format valid | prefix accuracy | task success (simulator) |
|---|---|---|---|
{rows}

- *format valid*: the plan earns the full format reward (0.5: keys, valid steps, ids in the action map);
- *prefix accuracy*: mean `c(c+1)/(T(T+1))` against the expert plan;
- *task success*: the plan, executed in the simulator from the task's initial state, meets every goal condition.

GRPO: {len(m["grpo_curve"])} steps with `format + accuracy`, online accuracy filtering
(groups kept {m["online_filter"]["kept"]}/{m["online_filter"]["seen"]}). Curve: `reward_curve.png`.
Wall time: {m["wall_seconds"]} s.
"""
    (out / "report.md").write_text(text)
