"""Execute a plan written in any vocabulary on a task and report what it achieved."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from groundrl.sim.goals import progress, satisfied
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import intent_to_skills, opens_containers, split_plan, to_intent
from groundrl.sim.world import Env, invalid


@dataclass
class ExecResult:
    success: bool
    progress: float
    steps: int
    invalid_steps: int
    feedback: list[str] = field(default_factory=list)
    vocab: str | None = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    failed = False
    for step in steps:
        if env.done:
            break
        intent = to_intent(step, found)
        skills, why = intent_to_skills(intent, env)
        if why == "noop":
            continue
        if not skills:
            res = env.step(None, why_unparsed=why)
            feedback.append(res.feedback)
            failed = True
        for sk in skills:
            res = env.step(sk)
            feedback.append(res.feedback)
            if not res.ok:
                failed = True
                break
            if res.done:
                break
        if failed and stop_on_failure:
            break
    return feedback, found, "", failed


def execute(
    task: Task | dict[str, Any],
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
