"""EB-ALFRED's evaluation protocol on the simulator.

For each task the policy sees the instruction, the textual observation, optionally a
rendered image, and the feedback so far, and answers a multi-step plan in any
vocabulary. The steps run in order until one fails (or the episode ends); then the
policy re-plans from the current state with the feedback. As in EmbodiedBench's
``EB_AlfredEvaluator``:

* the episode ends on success, after ``max_steps`` environment steps (30) or
  ``max_invalid`` invalid actions (10), or when the policy answers an empty plan;
* an answer no plan can be read from (e.g. malformed JSON) is an invalid action that
  takes no environment step, and the policy is asked again;
* a step that cannot be parsed or resolved is an invalid environment step (with the
  resolver's reason as feedback), like a failed action.

Where EmbodiedBench is silent we chose: a plan whose steps are all no-ops (ALFRED
``NoOp``) ends the episode like an empty one; and the policy is asked at most
``max_steps + max_invalid`` times, so a policy that answers non-empty plans that never
step cannot loop forever.

Metrics per group (:func:`summarise`), each a mean over its episodes:
``success_rate`` = mean [all goal conditions met]; ``progress_rate`` = mean
(satisfied goal conditions / all goal conditions) (ALFRED's goal-condition success);
``env_steps`` = mean environment steps; ``invalid_steps`` = mean invalid actions
(environment + unreadable answers); ``planner_calls`` = mean times the policy was asked;
``success_ci95`` = the Wilson score 95% interval of the success rate (a benchmark subset
has ~50 episodes, so its rate is only known to about ±0.13).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, NotRequired, TypedDict

from groundrl.intervals import wilson_ci
from groundrl.sim.execute import run_plan_steps
from groundrl.sim.goals import progress, satisfied
from groundrl.sim.policies import Feedback, PlanRequest
from groundrl.sim.render import render_scene
from groundrl.sim.skills import Skill
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, opens_containers, split_plan, vocab_names
from groundrl.sim.world import Env, StepResult, invalid


class FeedbackRecord(TypedDict):
    """One :class:`~groundrl.sim.policies.Feedback` as JSON."""

    action: str
    feedback: str
    skill: str | None


class EpisodeRecord(TypedDict):
    """:meth:`EpisodeResult.to_dict`: a line of ``results.jsonl`` / ``episodes.jsonl``
    (``history`` unless left out)."""

    id: str
    subset: str
    task_type: str
    instruction: str
    success: bool
    progress: float
    conditions: list[int]
    env_steps: int
    invalid_steps: int
    output_errors: int
    planner_calls: int
    end: str
    vocab: str | None
    history: NotRequired[list[FeedbackRecord]]
    answers: list[str]


class GroupMetrics(TypedDict):
    """The metrics of one group of episodes (see the module docstring)."""

    n_tasks: int
    success_rate: float
    success_ci95: list[float | None]
    progress_rate: float
    env_steps: float
    invalid_steps: float
    planner_calls: float


class SimMetrics(GroupMetrics):
    """:func:`summarise`: the overall metrics, the same per subset and per task type,
    and how many episodes ended each way."""

    by_subset: dict[str, GroupMetrics]
    by_task_type: dict[str, GroupMetrics]
    episode_ends: dict[str, int]


@dataclass
class EpisodeResult:
    id: str
    subset: str
    task_type: str
    instruction: str
    success: bool
    progress: float
    conditions: tuple[int, int]
    env_steps: int
    invalid_steps: int
    output_errors: int
    planner_calls: int
    end: str
    vocab: str | None = None
    history: list[Feedback] = field(default_factory=list)
    # the policy's text answers as written (cut at ANSWER_CHARS), so that an "empty plan"
    # or an unreadable answer of a model policy can be read afterwards
    answers: list[str] = field(default_factory=list)

    def to_dict(self, history: bool = True) -> EpisodeRecord:
        d: EpisodeRecord = {
            "id": self.id,
            "subset": self.subset,
            "task_type": self.task_type,
            "instruction": self.instruction,
            "success": self.success,
            "progress": self.progress,
            "conditions": list(self.conditions),
            "env_steps": self.env_steps,
            "invalid_steps": self.invalid_steps,
            "output_errors": self.output_errors,
            "planner_calls": self.planner_calls,
            "end": self.end,
            "vocab": self.vocab,
            "history": [{"action": h.action, "feedback": h.feedback, "skill": h.skill} for h in self.history],
            "answers": list(self.answers),
        }
        if not history:
            del d["history"]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EpisodeResult:
        """The result :meth:`to_dict` wrote (a resumed evaluation reads its episodes back);
        raises ``KeyError`` / ``TypeError`` / ``ValueError`` on a row that is not one."""
        names = {f.name for f in fields(cls)}
        row = {k: v for k, v in d.items() if k in names}
        a, b = row["conditions"]
        row["conditions"] = (int(a), int(b))
        row["history"] = [Feedback(**h) for h in row.get("history") or []]
        return cls(**row)


def _label(step: Any) -> str:
    if isinstance(step, str):
        return step
    try:
        return json.dumps(step, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(step)[:200]


ANSWER_CHARS = 4000  # [ours: a plan of 30 steps fits; a runaway answer stays bounded]

Episode = Generator[PlanRequest, Any, EpisodeResult]


def episode(
    task: Task,
    env: Env,
    *,
    vocab: Callable[[], str] | str = "auto",
    needs_image: bool = False,
    max_calls: int | None = None,
) -> Episode:
    """One episode as a generator: it yields a :class:`PlanRequest` whenever it needs a
    plan, is sent the policy's answer, and returns the :class:`EpisodeResult`.
    ``env`` must be fresh (``task.env(max_steps, max_invalid)``); ``vocab`` is the
    plans' vocabulary (or a callable read at every answer)."""
    history: list[Feedback] = []
    answers: list[str] = []
    actions: dict[int, str] | None = None
    errors = calls = 0
    end = ""
    found: str | None = None
    max_calls = env.max_steps + env.max_invalid if max_calls is None else max_calls
    while True:
        end = _stop_reason(task, env, errors, calls, max_calls)
        if end:
            break
        image = render_scene(env) if needs_image else None
        plan = yield PlanRequest(task, task.instruction, env.observation(), image, tuple(history))
        calls += 1
        if isinstance(plan, str):
            answers.append(plan[:ANSWER_CHARS])
        if plan is None:
            end = "empty plan"
            break
        want = vocab() if callable(vocab) else vocab
        if want not in vocab_names():
            want = "auto"
        if actions is None and _may_use_ids(plan):
            actions = action_space(task.scene)
        steps, found_now, err = split_plan(plan, want, actions)
        # nothing in any vocabulary (prose, malformed JSON): EB-ALFRED's "invalid output"
        if err or (steps and found_now is None):
            errors += 1
            history.append(
                Feedback(_label(plan)[:200], invalid(f"No plan could be read: {err or 'no known actions'}"))
            )
            continue
        if not steps:
            end = "empty plan"
            break
        found = found_now
        if opens_containers(found):
            env.auto_open = True  # as execute(): that vocabulary has no open/close
        stepped = _run_until_failure(env, steps, found, history)
        if not stepped:
            end = "empty plan"
            break
    done, total = progress(task.goal, env)
    return EpisodeResult(
        task.id,
        task.subset,
        task.task_type,
        task.instruction,
        done == total,
        done / total if total else 0.0,
        (done, total),
        env.steps,
        env.invalid_steps + errors,
        errors,
        calls,
        end,
        found,
        history,
        answers,
    )


def _stop_reason(task: Task, env: Env, errors: int, calls: int, max_calls: int) -> str:
    """Why the episode ends before the next planner call (``""``: it goes on)."""
    if satisfied(task.goal, env):
        return "success"
    if env.done:
        return "step budget" if env.steps >= env.max_steps else "invalid budget"
    if env.invalid_steps + errors >= env.max_invalid:
        return "invalid budget"
    if calls >= max_calls:
        return "planner call limit"
    return ""


def _may_use_ids(plan: Any) -> bool:
    return isinstance(plan, (str, dict, list)) and "action_id" in str(plan)[:100_000]


def _run_until_failure(env: Env, steps: Sequence[Any], vocab: str | None, history: list[Feedback]) -> int:
    """Run steps until one fails or the episode ends; returns how many env steps ran."""
    before = env.steps

    def record(raw: Any, skill: Skill | None, res: StepResult) -> None:
        label = _label(raw)
        history.append(
            Feedback(label, res.feedback) if skill is None else Feedback(label, res.feedback, str(skill))
        )

    run_plan_steps(env, steps, vocab, record)
    return env.steps - before


def run_episode(task: Task, policy: Any, max_steps: int = 30, max_invalid: int = 10) -> EpisodeResult:
    """One episode of ``policy`` on ``task`` (calls ``policy.reset(task, env)`` first
    when the policy has it)."""
    env = task.env(max_steps, max_invalid)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset(task, env)
    gen = episode(task, env, vocab=lambda: getattr(policy, "vocab", "auto"), needs_image=_needs_image(policy))
    try:
        req = next(gen)
        while True:
            req = gen.send(policy.plan(req.instruction, req.observation, req.image, req.feedback_history))
    except StopIteration as stop:
        return stop.value


def _needs_image(policy: Any) -> bool:
    return bool(getattr(policy, "needs_image", False))


def evaluate(
    tasks: Iterable[Task],
    policy: Any,
    max_steps: int = 30,
    max_invalid: int = 10,
    *,
    batch_size: int = 32,
    on_result: Callable[[EpisodeResult], None] | None = None,
) -> list[EpisodeResult]:
    """Run ``policy`` on every task; results in task order. ``on_result`` is called as
    each episode ends (the CLI's progress bar). A policy with ``plan_batch`` runs up to
    ``batch_size`` episodes in lockstep, asked once per round for all of them."""
    if max_steps < 1 or max_invalid < 1:
        raise ValueError(f"max_steps and max_invalid must be ≥ 1, got {max_steps} and {max_invalid}")
    if not callable(getattr(policy, "plan", None)) and not callable(getattr(policy, "plan_batch", None)):
        raise ValueError(f"{type(policy).__name__} is not a policy: it has no plan() method")
    tasks = list(tasks)
    if callable(getattr(policy, "plan_batch", None)):
        return _evaluate_batched(tasks, policy, max_steps, max_invalid, batch_size, on_result)
    out = []
    for t in tasks:
        r = run_episode(t, policy, max_steps, max_invalid)
        out.append(r)
        if on_result:
            on_result(r)
    return out


def _evaluate_batched(
    tasks: list[Task],
    policy: Any,
    max_steps: int,
    max_invalid: int,
    batch_size: int,
    on_result: Callable[[EpisodeResult], None] | None,
) -> list[EpisodeResult]:
    if batch_size < 1:
        raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
    results: list[EpisodeResult | None] = [None] * len(tasks)
    pending = iter(range(len(tasks)))
    live: dict[int, tuple[Episode, PlanRequest]] = {}
    vocab = lambda: getattr(policy, "vocab", "auto")  # noqa: E731

    def start(i: int) -> None:
        t = tasks[i]
        gen = episode(t, t.env(max_steps, max_invalid), vocab=vocab, needs_image=_needs_image(policy))
        _advance(i, gen, None)  # send(None) starts a generator, as next() does

    def _advance(i: int, gen: Episode, sent: Any) -> None:
        try:
            live[i] = (gen, gen.send(sent))
        except StopIteration as stop:
            live.pop(i, None)
            results[i] = stop.value
            if on_result:
                on_result(stop.value)

    def refill() -> None:
        while len(live) < batch_size:
            i = next(pending, None)
            if i is None:
                return
            start(i)

    refill()
    while live:
        ids = sorted(live)
        plans = policy.plan_batch([live[i][1] for i in ids])
        if len(plans) != len(ids):
            raise RuntimeError(f"plan_batch answered {len(plans)} plans for {len(ids)} requests")
        for i, plan in zip(ids, plans, strict=True):
            _advance(i, live[i][0], plan)
        refill()
    return [r for r in results if r is not None]


def _agg(rows: Sequence[EpisodeResult]) -> GroupMetrics:
    n = len(rows)

    def mean(xs: Iterable[float]) -> float:
        return sum(xs) / n if n else 0.0

    wins = sum(bool(r.success) for r in rows)
    lo, hi = wilson_ci(wins, n)
    return {
        "n_tasks": n,
        "success_rate": mean(float(r.success) for r in rows),
        "success_ci95": [lo, hi],
        "progress_rate": mean(r.progress for r in rows),
        "env_steps": mean(r.env_steps for r in rows),
        "invalid_steps": mean(r.invalid_steps for r in rows),
        "planner_calls": mean(r.planner_calls for r in rows),
    }


def summarise(results: Sequence[EpisodeResult]) -> SimMetrics:
    """Overall metrics plus ``by_subset`` (the task's EB-ALFRED subset; ALFRED
    trajectories use their task type as subset) and ``by_task_type``, each sorted by
    name. See the module docstring for the definitions."""
    by_subset: dict[str, list[EpisodeResult]] = defaultdict(list)
    by_type: dict[str, list[EpisodeResult]] = defaultdict(list)
    ends: dict[str, int] = defaultdict(int)
    for r in results:
        by_subset[r.subset].append(r)
        by_type[r.task_type].append(r)
        ends[r.end] += 1
    return {
        **_agg(results),
        "by_subset": {k: _agg(v) for k, v in sorted(by_subset.items())},
        "by_task_type": {k: _agg(v) for k, v in sorted(by_type.items())},
        "episode_ends": dict(sorted(ends.items())),
    }


__all__ = ["EpisodeResult", "episode", "evaluate", "run_episode", "summarise"]
