"""The planner demo's reward-filtered imitation baseline: success-filtered SFT
(rejection-sampling fine-tuning / expert iteration) at GRPO's budget of rewarded episodes.

The question a reader asks of RL post-training (RAFT, ReST, expert iteration vs GRPO,
issue 38 item 1) is whether RL beats imitation that uses the same reward. Each round:

1. sample episodes from the current policy in the simulator, exactly as GRPO's rollouts
   do (:class:`~groundrl.train.multiturn.EnvRollout`, multi-turn with re-planning, at
   GRPO's temperature, ``num_generations`` episodes per task, on the training tasks of
   the task types RL sees);
2. keep the successful episodes (every goal condition met) — the reward used as a 0/1
   filter;
3. fine-tune the policy on every turn of the kept episodes (the same completion-only
   SFT step as the teacher's data, :func:`groundrl.demos.planner.sft`: a turn's earlier
   plans and their feedback are context).

The budget: ``cfg.grpo_steps × cfg.grpo_batch`` simulator-scored episodes in all, GRPO's
count, split evenly over ``cfg.fsft_rounds`` rounds. Which turns to keep (all turns of a
successful episode, the failed first plans before a successful re-plan included, as
GRPO's episode reward also credits them), the rounds, epochs and learning rate are
[ours]: the papers do not run this baseline.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypedDict

from groundrl.train.multiturn import EnvRollout, Episode
from groundrl.train.planning_data import prompt

if TYPE_CHECKING:
    from groundrl.demos.planner import DemoConfig
    from groundrl.sim.tasks import Task

# episodes played in lockstep per generate batch: bounds padding and memory [ours]
PLAY_BATCH = 64


@dataclass(frozen=True)
class RoundSft:
    """The :class:`~groundrl.demos.planner.SftSettings` of one round's fine-tuning."""

    seed: int
    sft_lr: float
    sft_epochs: int
    sft_batch: int


def round_sizes(budget: int, rounds: int, group: int) -> list[int]:
    """``budget`` episodes split over ``rounds`` in whole groups of ``group`` (the
    earlier rounds take the remainder); the sizes sum to ``budget`` when ``group``
    divides it.

    >>> round_sizes(3200, 4, 8)
    [800, 800, 800, 800]
    >>> round_sizes(48, 5, 4)
    [12, 12, 8, 8, 8]
    """
    groups, rest = divmod(budget // group, rounds)
    return [(groups + (r < rest)) * group for r in range(rounds)]


def round_prompts(tasks: list, n: int, group: int, rng: random.Random) -> list[str]:
    """``n`` prompts as GRPO draws them: tasks in shuffled order (reshuffled when used
    up), each repeated ``group`` times in a row."""
    out: list[str] = []
    order: list = []
    while len(out) < n:
        if not order:
            order = list(tasks)
            rng.shuffle(order)
        out += [prompt(order.pop())] * min(group, n - len(out))
    return out


class TurnRecord(TypedDict):
    """One turn as an SFT record (:func:`groundrl.demos.planner.sft` reads it): the task's
    prompt, the earlier turns with the environment's feedback as context, the turn's plan
    as target."""

    prompt: str
    turns: list[tuple[str, str]]  # (plan, feedback) of each earlier turn
    completion: str
    task: Task


class FsftRound(TypedDict):
    """One round's counts: episodes sampled, successful ones, turns fine-tuned on."""

    episodes: int
    kept: int
    records: int


class FsftBudget(FsftRound):
    """:func:`filtered_sft`'s result (``metrics.json`` ``fsft_budget``): the totals and each round."""

    rounds: list[FsftRound]


def episode_records(ep: Episode, tokenizer, task_prompt: str, task: Task) -> list[TurnRecord]:
    """One SFT record per turn of ``ep`` (the layout of the teacher's records: the
    prompt, the earlier turns with their feedback as context, the turn's plan as
    target). The feedback is read back from the episode's environment-masked ids."""
    feedback: list[str] = []
    seg: list[int] = []
    for tok, mask in zip(ep.completion_ids, ep.env_mask, strict=True):
        if mask == 0:
            seg.append(tok)
        elif seg:
            feedback.append(tokenizer.decode(seg, skip_special_tokens=True))
            seg = []
    recs: list[TurnRecord] = []
    for k, text in enumerate(ep.texts):
        turns = [(ep.texts[j], feedback[j]) for j in range(min(k, len(feedback)))]
        recs.append({"prompt": task_prompt, "turns": turns, "completion": text, "task": task})
    return recs


def filtered_sft(
    model,
    tokenizer,
    tasks: list,
    cfg: DemoConfig,
    log=print,
    train_fn: Callable[..., Any] | None = None,
    generate_fn: Callable[..., list[list[int]]] | None = None,
) -> FsftBudget:
    """Success-filtered SFT of ``model`` in place (see the module docstring). Returns
    ``episodes`` (simulator-scored episodes played: the budget), ``kept`` (successful
    ones), ``records`` (turns fine-tuned on) and ``rounds`` (those per round with the
    round's sampled success rate). ``train_fn`` (default
    :func:`groundrl.demos.planner.sft`) and ``generate_fn`` (default: sampling at
    ``cfg.grpo_temperature``) are for tests."""
    if train_fn is None:
        from groundrl.demos.planner import sft  # lazy: planner imports this module

        train_fn = sft
    import torch  # lazy: loaded only when the baseline runs

    torch.manual_seed(cfg.seed)  # the sampling does not depend on what ran before (GRPO)

    by_prompt = {prompt(t): t for t in tasks}
    rollout = EnvRollout(by_prompt, max_turns=cfg.max_turns, generate_fn=generate_fn)
    sampler = SimpleNamespace(args=SimpleNamespace(temperature=cfg.grpo_temperature))
    rng = random.Random(f"{cfg.seed}:filtered-sft")
    budget = cfg.grpo_steps * cfg.grpo_batch
    rounds: list[FsftRound] = []
    for r, n in enumerate(round_sizes(budget, cfg.fsft_rounds, cfg.num_generations)):
        prompts = round_prompts(tasks, n, cfg.num_generations, rng)
        episodes: list[Episode] = []
        for b in range(0, len(prompts), PLAY_BATCH):
            chunk = prompts[b : b + PLAY_BATCH]
            episodes += rollout.play(model, tokenizer, chunk, cfg.max_new_tokens, sampler)
        recs = [
            rec
            for p, ep in zip(prompts, episodes, strict=True)
            if ep.success
            for rec in episode_records(ep, tokenizer, p, by_prompt[p])
        ]
        kept = sum(ep.success for ep in episodes)
        log(
            f"  filtered SFT round {r + 1}/{cfg.fsft_rounds}: {kept} of {len(episodes)} sampled episodes "
            f"succeeded; fine-tuning on their {len(recs)} turns"
        )
        if recs:
            settings = RoundSft(cfg.seed + r, cfg.fsft_lr, cfg.fsft_epochs, cfg.sft_batch)
            train_fn(model, tokenizer, recs, settings, log)
        rounds.append({"episodes": len(episodes), "kept": kept, "records": len(recs)})
    model.eval()
    return {
        "episodes": sum(x["episodes"] for x in rounds),
        "kept": sum(x["kept"] for x in rounds),
        "records": sum(x["records"] for x in rounds),
        "rounds": rounds,
    }
