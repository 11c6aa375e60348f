"""Execute a plan written in any vocabulary on a task and report what it achieved."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from groundrl.sim.goals import progress, satisfied
from groundrl.sim.skills import Skill
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import intent_to_skills, opens_containers, split_plan, to_intent
from groundrl.sim.world import Env, StepResult, invalid


class ExecRecord(TypedDict):
    """:meth:`ExecResult.to_dict`."""

    success: bool
    progress: float
    steps: int
    invalid_steps: int
    feedback: list[str]
    vocab: str | None
    error: str


@dataclass
class ExecResult:
    success: bool
    progress: float
    steps: int
    invalid_steps: int
    feedback: list[str] = field(default_factory=list)
    vocab: str | None = None
    error: str = ""

    def to_dict(self) -> ExecRecord:
        return {
            "success": self.success,
            "progress": self.progress,
            "steps": self.steps,
            "invalid_steps": self.invalid_steps,
            "feedback": list(self.feedback),
            "vocab": self.vocab,
            "error": self.error,
        }


StepHook = Callable[[Any, Skill | None, StepResult], None]


def run_plan_steps(
    env: Env,
    steps: Sequence[Any],
    vocab: str | None,
    on_step: StepHook,
    *,
    stop_on_failure: bool = True,
    on_action: Callable[[Any], None] | None = None,
) -> bool:
    """Run a plan's steps (already split, written in ``vocab``) in ``env``, in order,
    until the episode ends or, with ``stop_on_failure``, a step fails: EB-ALFRED's loop,
    the one every surface (``execute``, the Gymnasium env, the evaluation loop) runs.

    A step may expand into several skills (a macro); a no-op step is skipped; a step
    that names no action is one invalid environment step with the reason as feedback.
    ``on_action(raw)`` is called once for every step that is not a no-op, before it
    runs; ``on_step(raw, skill, result)`` after every environment step (``skill`` is
    ``None`` for a step that named no action). Returns whether any step failed."""
    failed = False
    for raw in steps:
        if env.done:
            break
        skills, why = intent_to_skills(to_intent(raw, vocab), env)
        if why == "noop":
            continue
        if on_action is not None:
            on_action(raw)
        if not skills:
            on_step(raw, None, env.step(None, why_unparsed=why))
            failed = True
        for sk in skills:
            res = env.step(sk)
            on_step(raw, sk, res)
            if not res.ok:
                failed = True
                break
            if res.done:
                break
        if failed and stop_on_failure:
            break
    return failed


def run_steps(
    env: Env, task: Task, plan: Any, vocab: str = "auto", stop_on_failure: bool = False
) -> tuple[list[str], str | None, str, bool]:
    """Run a plan's steps in ``env``; returns (feedback, vocabulary, error, failed)."""
    steps, found, err = split_plan(plan, vocab)
    feedback: list[str] = []
    if err:
        return feedback, found, err, True
    if not steps:
        return feedback, found, "empty plan", True
    if opens_containers(found):
        env.auto_open = True  # that vocabulary has no open/close: containers open on put / pick up
    failed = run_plan_steps(
        env, steps, found, lambda raw, sk, res: feedback.append(res.feedback), stop_on_failure=stop_on_failure
    )
    return feedback, found, "", failed


def execute(
    task: Task | Mapping[str, Any],
    plan: Any,
    vocab: str = "auto",
    max_steps: int | None = None,
    max_invalid: int = 10,
) -> ExecResult:
    """Execute ``plan`` from the task's initial state, EB-ALFRED rules (30 steps, 10
    invalid), and return success, progress rate, steps, invalid steps and feedback.
    Never raises on any plan text."""
    try:
        t = task if isinstance(task, Task) else Task.from_json(task)
    except (KeyError, TypeError, ValueError) as e:
        return ExecResult(False, 0.0, 0, 0, [], None, f"bad task: {e}")
    env = Env(
        t.scene, max_steps=max_steps or 30, max_invalid=max_invalid, goal=lambda e: satisfied(t.goal, e)
    )
    try:
        feedback, found, err, _ = run_steps(env, t, plan, vocab)
    except Exception as e:  # a plan must never crash an RL step
        feedback, found, err = (
            [invalid(f"internal error: {type(e).__name__}")],
            None,
            f"{type(e).__name__}: {e}",
        )
    done, total = progress(t.goal, env)
    return ExecResult(
        done == total, done / total if total else 0.0, env.steps, env.invalid_steps, feedback, found, err
    )
