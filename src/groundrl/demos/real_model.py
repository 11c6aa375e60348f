"""``groundrl demo real-model``: a real pretrained causal LM (SmolLM2-135M-Instruct by
default, any local text-only checkpoint or fixture name) learns household planning with
the simulator in the loop, on CPU (issue 36 item 4).

The planner demo's story [Reinforced Reasoning §3.2, §4.3, Table 3] on a real model with
a real tokenizer and chat template, cut to what fits 30 minutes on 2 cores:

1. generate household tasks (:func:`groundrl.demos.planner.split_tasks`: train and
   held-out, held-out deduplicated against every training prompt);
2. zero-shot: the model, greedy, on the first ``n_eval_zero_shot`` held-out tasks;
3. SFT on ``n_sft`` plans of the imperfect teacher (:mod:`groundrl.sim.teacher`: the
   expert with systematic mistakes), few steps, so the student is imperfect [ours];
4. GRPO (TRL ``GRPOTrainer``, :class:`~groundrl.train.multiturn.EnvRollout` as
   ``rollout_func``): each completion is run in the simulator (up to its first failed
   action, where EB-ALFRED hands control back) and its reward is the environment's plan
   reward, ``progress + 1`` on success;
5. evaluate SFT and GRPO, greedy, on the held-out tasks; paired bootstrap 95 % CIs of
   GRPO − SFT and SFT − zero-shot; ``report.md``, ``metrics.json``, ``success.png``,
   ``reward_curve.png`` and the logs the test re-checks (``rollouts.jsonl``,
   ``episodes.jsonl``, ``prompts.json``).

Plans are plain numbered EB-ALFRED action lines (``1. find a Apple``), one plan per
episode (no re-planning): about a third of the RR JSON's tokens [issue 36 "Why"] [ours].
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from groundrl.demos.planner import (
    DemoConfig,
    GrpoCurvePoint,
    bootstrap_ci,
    greedy,
    plot_curve,
    sft,
    split_tasks,
)
from groundrl.demos.real_model_report import plot_success, write_report
from groundrl.models.loading import is_text_only, load_model
from groundrl.sim.episode_prompt import prompt as task_prompt
from groundrl.sim.execute import execute
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
from groundrl.sim.vocab import split_plan, to_intent
from groundrl.train.multiturn import EnvRollout, env_reward_funcs
from groundrl.train.progress import attach_progress

if TYPE_CHECKING:
    from torch import Tensor

#: The instruction in the system turn: the action syntax the simulator reads [ours].
SYSTEM = (
    "You plan for a household robot. Reply with a numbered list of actions, one per line, "
    "using only: find a X, pick up the X, put down the object in hand, open the X, close the X, "
    "turn on the X, turn off the X, slice the X."
)


@dataclass
class RealModelConfig:
    """Settings of the real-model demo; every value is ours unless marked."""

    model: str = "smollm2-135m-instruct"
    n_train: int = 400  # GRPO draws its prompts from these; SFT uses the first n_sft
    n_eval: int = 150  # held-out tasks before deduplication (the same for every stage)
    n_eval_zero_shot: int = 30  # zero-shot writes no runnable plan; a subset suffices
    n_sft: int = 160  # teacher plans SFT sees
    sft_epochs: int = 2  # 12 steps (96 plans, 1 epoch) left a student that never stopped [docs/sim.md]
    sft_batch: int = 8
    sft_lr: float = 1e-4
    teacher_rates: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    grpo_steps: int = 25
    grpo_batch: int = 8  # completions per step: grpo_batch / num_generations prompts
    num_generations: int = 8  # G [issue 36: G = 8 with 1-2 prompts per step]
    grpo_lr: float = 3e-5
    grpo_temperature: float = 1.0
    grpo_scale_rewards: str = "group"
    grpo_freeze_embeddings: bool = True  # tied input/output embeddings stay as SFT left them
    max_new_tokens: int = 96  # teacher plans are at most 92 SmolLM2 tokens (seed 0)
    threads: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        self.teacher_rates = check_rates(self.teacher_rates)
        for k in ("n_train", "n_eval", "n_eval_zero_shot", "n_sft", "sft_epochs", "sft_batch"):
            if getattr(self, k) < 1:
                raise ValueError(f"demo real-model {k} must be ≥ 1, got {getattr(self, k)}")
        for k in ("grpo_batch", "num_generations", "max_new_tokens", "threads"):
            if getattr(self, k) < 1:
                raise ValueError(f"demo real-model {k} must be ≥ 1, got {getattr(self, k)}")
        if self.grpo_steps < 0:
            raise ValueError(f"demo real-model grpo_steps must be ≥ 0, got {self.grpo_steps}")
        if self.n_sft > self.n_train:
            raise ValueError(f"demo real-model n_sft ({self.n_sft}) must be ≤ n_train ({self.n_train})")
        if self.grpo_batch % self.num_generations:
            raise ValueError(
                f"demo real-model grpo_batch ({self.grpo_batch}) must be a multiple of "
                f"num_generations ({self.num_generations})"
            )

    @classmethod
    def quick(cls, **over: Any) -> RealModelConfig:
        """A smoke run (every stage on a handful of tasks; nothing is expected to be learned)."""
        base = {
            "n_train": 16,
            "n_eval": 4,
            "n_eval_zero_shot": 2,
            "n_sft": 8,
            "sft_epochs": 1,
            "sft_batch": 4,
            "grpo_steps": 1,
            "grpo_batch": 4,
            "num_generations": 4,
            "max_new_tokens": 64,
            "threads": 1,
        }
        return cls(**{**base, **over})


def numbered(names: list[str]) -> str:
    """A plan as numbered lines, the format the simulator reads one step per line.

    >>> print(numbered(["find a Apple", "pick up the Apple"]))
    1. find a Apple
    2. pick up the Apple
    """
    return "\n".join(f"{i}. {n}" for i, n in enumerate(names, 1))


def chat_prompt(tokenizer: Any, task: Task) -> str:
    """The task as the model's chat template renders it (system turn :data:`SYSTEM`, the
    simulator's prompt as the user turn, the assistant turn opened); raw text with the
    system line in front when the tokenizer has no chat template."""
    user = task_prompt(task)
    if not getattr(tokenizer, "chat_template", None):
        return f"{SYSTEM}\n{user}"
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    return str(tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True))


class TeacherRecord(TypedDict):
    """An SFT record: the chat prompt, the teacher's numbered plan and its mistakes."""

    prompt: str
    completion: str
    task: Task
    made: tuple[str, ...]  # the teacher mistakes applied to the plan


class EvalRow(TypedDict):
    """One greedy evaluation episode (an ``episodes.jsonl`` line, less ``stage``)."""

    task_id: str
    prompt: str
    text: str
    success: int
    progress: float
    reward: float
    tokens: int


class RolloutRow(TypedDict):
    """One GRPO completion as the rollout played it (a ``rollouts.jsonl`` line)."""

    call: int  # the rollout batch
    task_id: str
    prompt: str
    text: str
    reward: float
    success: int
    tokens: int


class StageMetrics(TypedDict):
    """A stage's held-out results (:func:`stage_metrics`)."""

    n_eval_tasks: int
    success_rate: float
    success_ci95: list[float]
    progress: float
    readable: float
    mean_tokens: float
    mistake_share: dict[str, float]
    example: str


class PairedDiff(TypedDict):
    """mean(b) − mean(a) over the same tasks (:func:`paired`)."""

    diff: float | None
    ci95: list[float]
    won_lost: list[int]


class GrpoLog(TypedDict):
    """TRL's per-step log and every rollout of a GRPO run."""

    curve: list[GrpoCurvePoint]
    rows: list[RolloutRow]


class ClockSummary(TypedDict):
    """Wall and CPU time per stage and in all, and the load around the run."""

    stage_seconds: dict[str, float]
    stage_cpu_seconds: dict[str, float]
    wall_seconds: float
    cpu_seconds: float
    load_average_1min: list[float]  # at the start, at the end


class RealModelMetrics(TypedDict):
    """``metrics.json``. The keys after ``n_parameters`` are filled in as the run goes."""

    config: dict[str, object]  # dataclasses.asdict(RealModelConfig): printed, not computed with
    n_train_tasks: int
    n_eval_tasks: int
    n_eval_dropped_duplicates: int
    n_parameters: int
    zero_shot: NotRequired[StageMetrics]
    teacher_sft_data_success: NotRequired[float]
    sft_param_change_l2: NotRequired[float]
    sft: NotRequired[StageMetrics]
    grpo_param_change_l2: NotRequired[float]
    grpo: NotRequired[StageMetrics]
    grpo_minus_sft: NotRequired[PairedDiff]
    sft_minus_zero_shot: NotRequired[PairedDiff]
    target_met: NotRequired[bool]
    grpo_curve: NotRequired[list[GrpoCurvePoint]]
    sft_losses: NotRequired[list[float]]
    stage_seconds: NotRequired[dict[str, float]]
    stage_cpu_seconds: NotRequired[dict[str, float]]
    wall_seconds: NotRequired[float]
    cpu_seconds: NotRequired[float]
    load_average_1min: NotRequired[list[float]]


def teacher_records(tasks: list[Task], tokenizer: Any, cfg: RealModelConfig) -> list[TeacherRecord]:
    """One SFT record per task: the chat prompt and the teacher's numbered plan, mistakes
    included (habits drawn with ``random.Random(f"{seed}:{task id}")``, as in the planner
    demo)."""
    recs: list[TeacherRecord] = []
    for t in tasks:
        habits = draw_habits(random.Random(f"{cfg.seed}:{t.id}"), cfg.teacher_rates)
        names, made = teacher_plan(t, t.env(), habits)
        recs.append(
            {"prompt": chat_prompt(tokenizer, t), "completion": numbered(names), "task": t, "made": made}
        )
    return recs


def check_model(name: str) -> None:
    """A ``ValueError`` naming what to pass unless ``name`` is a text-only causal LM (a
    local folder or a fixture name); reads only the config."""

    if not is_text_only(name):
        raise ValueError(
            f"demo real-model needs a text-only causal LM (a local folder or a fixture name such as "
            f"smollm2-135m-instruct); {name!r} is a vision-language model or has no readable config"
        )


def load_text_model(name: str) -> tuple[Any, Any]:
    """The model and its tokenizer (left padding; pad = eos where it has none)."""

    check_model(name)
    model, tokenizer = load_model(name)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def evaluate(model: Any, tokenizer: Any, tasks: list[Task], cfg: RealModelConfig) -> list[EvalRow]:
    """Greedy one-plan episodes on ``tasks`` through :class:`EnvRollout` (the simulator's
    plan reward); one row per task: prompt, text, success, progress, reward, tokens."""
    model.eval()
    prompts = [chat_prompt(tokenizer, t) for t in tasks]
    rollout = EnvRollout(dict(zip(prompts, tasks, strict=True)), max_turns=1, generate_fn=greedy)
    episodes = rollout.play(model, tokenizer, prompts, cfg.max_new_tokens)
    return [
        {
            "task_id": t.id,
            "prompt": p,
            "text": e.texts[0] if e.texts else "",
            "success": int(e.success),
            "progress": e.progress,
            "reward": e.reward,
            "tokens": len(e.completion_ids),
        }
        for t, p, e in zip(tasks, prompts, episodes, strict=True)
    ]


def stage_metrics(rows: Sequence[EvalRow], tasks: list[Task], seed: int) -> StageMetrics:
    """Episode success with its bootstrap 95 % CI, mean progress, the share of plans
    whose every line is an action the simulator reads, mean completion tokens, and the
    share of episodes showing each teacher mistake."""

    n = max(1, len(rows))
    succ = [r["success"] for r in rows]
    counts = {k: 0 for k in MISTAKES}
    for t, r in zip(tasks, rows, strict=True):
        for k in count_mistakes(replay(t, [r["text"]])):
            counts[k] += 1
    return {
        "n_eval_tasks": len(rows),
        "success_rate": round(sum(succ) / n, 4),
        "success_ci95": list(bootstrap_ci(succ, seed=seed)),
        "progress": round(sum(r["progress"] for r in rows) / n, 4),
        "readable": round(sum(readable(r["text"]) for r in rows) / n, 4),
        "mean_tokens": round(sum(r["tokens"] for r in rows) / n, 1),
        "mistake_share": {k: round(v / n, 4) for k, v in counts.items()},
        "example": rows[0]["text"] if rows else "",
    }


def readable(text: str) -> bool:
    """Every line of ``text`` is an EB-ALFRED action the simulator can parse (resolving
    the object is the simulator's business, not this check's).

    >>> readable("1. find a Apple\\n2. pick up the Apple"), readable("1. Chill the Cup.")
    (True, False)
    """

    steps, found, err = split_plan(text)
    return (
        bool(steps)
        and not err
        and found == "eb_alfred"
        and all(to_intent(s, found).verb is not None for s in steps)
    )


def paired(a: list[int], b: list[int], seed: int) -> PairedDiff:
    """mean(b) − mean(a) over the same tasks with its paired bootstrap 95 % CI, and the
    tasks won / lost."""
    return {
        "diff": round(sum(b) / len(b) - sum(a) / len(a), 4) if a else None,
        "ci95": list(bootstrap_ci(a, b, seed=seed)),
        "won_lost": [
            sum(y > x for x, y in zip(a, b, strict=True)),
            sum(y < x for x, y in zip(a, b, strict=True)),
        ],
    }


def _grpo_args(cfg: RealModelConfig, out: Path) -> Any:
    """TRL's ``GRPOConfig`` for the demo: no KL term (β = 0, as the planner demo), no
    gradient checkpointing (memory is no constraint on CPU; it costs ~30 % compute
    [issue 36 "Why"])."""
    # lazy: trl loads only when the demo runs (not at `groundrl --help`)
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out / "grpo"),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        learning_rate=cfg.grpo_lr,
        max_steps=cfg.grpo_steps,
        per_device_train_batch_size=cfg.grpo_batch,
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_new_tokens,
        temperature=cfg.grpo_temperature,
        scale_rewards=cfg.grpo_scale_rewards,
        beta=0.0,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        reward_weights=[1.0, 0.0],
        seed=cfg.seed,
        disable_tqdm=True,
    )


def grpo(model: Any, tokenizer: Any, tasks: list[Task], cfg: RealModelConfig, out: Path, log: Any) -> GrpoLog:
    """GRPO with the simulator in the loop. Every rollout batch's completions, rewards and
    successes are logged (``rows``) beside TRL's per-step log (``curve``)."""
    # lazy: datasets and trl load only when the demo runs (not at `groundrl --help`)
    from datasets import Dataset
    from trl import GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    prompts = [chat_prompt(tokenizer, t) for t in tasks]
    by_prompt = dict(zip(prompts, tasks, strict=True))
    rollout = EnvRollout(by_prompt, max_turns=1)
    rows: list[RolloutRow] = []

    def logged(batch: list[Any], trainer: Any) -> dict[str, Any]:
        res = rollout(batch, trainer)
        step = len(rollout.history)
        for p, e in zip(batch, rollout.episodes, strict=True):
            rows.append(
                {
                    "call": step,
                    "task_id": by_prompt[p].id,
                    "prompt": p,
                    "text": e.texts[0],
                    "reward": e.reward,
                    "success": int(e.success),
                    "tokens": len(e.completion_ids),
                }
            )
        return res

    funcs, _ = env_reward_funcs()
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=list(funcs),
        args=_grpo_args(cfg, out),
        train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
        rollout_func=logged,
    )
    emb = model.get_input_embeddings().weight
    emb.requires_grad_(not cfg.grpo_freeze_embeddings)
    model.train()
    attach_progress(trainer, "grpo", log)
    try:
        trainer.train()
    finally:
        emb.requires_grad_(True)
    model.eval()
    curve: list[GrpoCurvePoint] = [
        {
            "step": h["step"],
            "reward": h.get("reward"),
            "reward_std": h.get("reward_std"),
            "success": h.get("rewards/env_success/mean"),
        }
        for h in trainer.state.log_history
        if "reward" in h
    ]
    _remove_if_empty(out / "grpo")
    return {"curve": curve, "rows": rows}


def _remove_if_empty(path: Path) -> None:
    if path.is_dir() and not any(path.iterdir()):
        path.rmdir()


def _snapshot(model: Any) -> dict[str, Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _change(model: Any, before: Mapping[str, Tensor]) -> float:
    """L2 norm of the parameter change since ``before`` (the test checks SFT moved them)."""
    total = 0.0
    for k, v in model.state_dict().items():
        total += float(((v.detach().float() - before[k].float()) ** 2).sum())
    return round(math.sqrt(total), 6)


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def run_real_model_demo(out: Path, cfg: RealModelConfig, log: Any = print) -> RealModelMetrics:
    """Run the demo into ``out`` and return its metrics (also ``out/metrics.json``)."""
    # lazy: torch loads only when the demo runs (not at `groundrl --help`)
    import torch

    before_threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        return _run(Path(out), cfg, log)
    finally:
        torch.set_num_threads(before_threads)


def _run(out: Path, cfg: RealModelConfig, log: Any) -> RealModelMetrics:

    out.mkdir(parents=True, exist_ok=True)
    clock = _Clock()
    _, train, held = split_tasks(DemoConfig(n_train=cfg.n_train, n_eval=cfg.n_eval, seed=cfg.seed))
    log(
        f"[1/5] {len(train)} training tasks, {len(held)} held-out tasks "
        f"({cfg.n_eval - len(held)} held-out prompts repeated a training prompt and were dropped)"
    )
    model, tokenizer = load_text_model(cfg.model)
    m: RealModelMetrics = {
        "config": asdict(cfg),
        "n_train_tasks": len(train),
        "n_eval_tasks": len(held),
        "n_eval_dropped_duplicates": cfg.n_eval - len(held),
        "n_parameters": sum(p.numel() for p in model.parameters()),
    }
    zs_tasks = held[: cfg.n_eval_zero_shot]
    log(f"[2/5] zero-shot: {cfg.model} greedy on {len(zs_tasks)} held-out tasks")
    zs = evaluate(model, tokenizer, zs_tasks, cfg)
    m["zero_shot"] = stage_metrics(zs, zs_tasks, cfg.seed)
    log(f"  zero-shot: {_fmt(m['zero_shot'])}")
    clock.lap("zero_shot_eval")
    recs = teacher_records(train[: cfg.n_sft], tokenizer, cfg)
    m["teacher_sft_data_success"] = round(
        sum(_sim_success(r["completion"], r["task"]) for r in recs) / len(recs), 4
    )
    log(
        f"[3/5] SFT on {len(recs)} teacher plans (their success in the simulator: "
        f"{m['teacher_sft_data_success']:.2f}), {cfg.sft_epochs} epoch(s) of batch {cfg.sft_batch}"
    )
    before = _snapshot(model)
    losses = sft(model, tokenizer, recs, cfg, log)
    m["sft_param_change_l2"] = _change(model, before)
    clock.lap("sft")
    sft_rows = evaluate(model, tokenizer, held, cfg)
    m["sft"] = stage_metrics(sft_rows, held, cfg.seed)
    log(f"  SFT: {_fmt(m['sft'])}")
    clock.lap("sft_eval")
    log(
        f"[4/5] GRPO for {cfg.grpo_steps} steps, {cfg.grpo_batch} completions per step "
        f"(G = {cfg.num_generations}), each run in the simulator"
    )
    before = _snapshot(model)
    g: GrpoLog = grpo(model, tokenizer, train, cfg, out, log) if cfg.grpo_steps else {"curve": [], "rows": []}
    pools = {"sft": [r["prompt"] for r in recs], "grpo": [chat_prompt(tokenizer, t) for t in train]}
    m["grpo_param_change_l2"] = _change(model, before)
    del before
    clock.lap("grpo")
    grpo_rows = evaluate(model, tokenizer, held, cfg)
    m["grpo"] = stage_metrics(grpo_rows, held, cfg.seed)
    log(f"  GRPO: {_fmt(m['grpo'])}")
    clock.lap("grpo_eval")
    _compare(m, zs, sft_rows, grpo_rows, cfg)
    m["grpo_curve"], m["sft_losses"] = g["curve"], [round(x, 4) for x in losses]
    m.update(clock.summary())
    log("[5/5] writing the report")
    _write_logs(out, zs, sft_rows, grpo_rows, g["rows"], pools, [*train, *held])
    plot_curve(
        g["curve"],
        losses,
        out / "reward_curve.png",
        group=cfg.grpo_batch,
        grpo_title="GRPO, simulator reward (one plan per episode)",
    )
    plot_success(m, out / "success.png")
    (out / "metrics.json").write_text(json.dumps(m, indent=2) + "\n")
    write_report(out, m)
    return m


def _compare(
    m: RealModelMetrics,
    zs: list[EvalRow],
    sft_rows: list[EvalRow],
    grpo_rows: list[EvalRow],
    cfg: RealModelConfig,
) -> None:
    s, g = [r["success"] for r in sft_rows], [r["success"] for r in grpo_rows]
    m["grpo_minus_sft"] = paired(s, g, cfg.seed)
    m["sft_minus_zero_shot"] = paired([r["success"] for r in zs], s[: len(zs)], cfg.seed)
    m["target_met"] = bool(
        m["grpo_minus_sft"]["diff"] is not None
        and m["grpo_minus_sft"]["diff"] >= 0.10
        and m["grpo_minus_sft"]["ci95"][0] > 0
    )


def _write_logs(
    out: Path,
    zs: list[EvalRow],
    sft_rows: list[EvalRow],
    grpo_rows: list[EvalRow],
    rollouts: list[RolloutRow],
    pools: dict[str, list[str]],
    tasks: list[Task],
) -> None:
    """The records the demo test re-checks: every GRPO rollout (reward as logged), every
    evaluation episode, the prompts of each split (SFT's, GRPO's pool, held-out), and each
    task's JSON by id."""
    _write_jsonl(out / "rollouts.jsonl", rollouts)
    _write_jsonl(
        out / "episodes.jsonl",
        [
            {"stage": s, **r}
            for s, rows in (("zero_shot", zs), ("sft", sft_rows), ("grpo", grpo_rows))
            for r in rows
        ],
    )
    prompts = {**pools, "held_out": [r["prompt"] for r in sft_rows]}
    (out / "prompts.json").write_text(json.dumps(prompts, indent=1) + "\n")
    (out / "tasks.json").write_text(json.dumps({t.id: t.to_json() for t in tasks}) + "\n")


def _sim_success(text: str, task: Task) -> int:

    return int(execute(task, text).success)


def _fmt(s: StageMetrics) -> str:
    lo, hi = s["success_ci95"]
    return (
        f"success {s['success_rate']:.3f} [{lo:.3f}, {hi:.3f}], progress {s['progress']:.2f}, "
        f"readable plans {s['readable']:.2f}, {s['mean_tokens']:.0f} tokens"
    )


class _Clock:
    """Wall and CPU seconds per stage and the 1-minute load average at start and end."""

    def __init__(self) -> None:
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        self.last, self.last_cpu = self.t0, self.c0
        self.load0 = os.getloadavg()[0]
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        self.wall[name], self.cpu[name] = round(now - self.last, 1), round(cpu - self.last_cpu, 1)
        self.last, self.last_cpu = now, cpu

    def summary(self) -> ClockSummary:
        return {
            "stage_seconds": self.wall,
            "stage_cpu_seconds": self.cpu,
            "wall_seconds": round(time.perf_counter() - self.t0, 1),
            "cpu_seconds": round(time.process_time() - self.c0, 1),
            "load_average_1min": [round(self.load0, 2), round(os.getloadavg()[0], 2)],
        }
