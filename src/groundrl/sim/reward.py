"""Plans as rewards: execute a completion's plan from the sample's initial state and
score what it achieved — an executable reward none of the papers had.

    sim = progress_rate + success_bonus · [success]

``progress_rate`` = satisfied ALFRED goal conditions / all of them after running the
plan (:func:`groundrl.sim.execute.execute`: EB-ALFRED's 30-step and 10-invalid-action
budgets; unreadable or unresolvable steps are invalid steps and execution goes on);
``success`` = every condition met. Defaults: ``success_bonus = 1.0``, so the reward
lies in [0, 2]; a perfect plan scores 2.

Choices (the papers have no such reward): an empty completion, or one from which no
step can be read in any vocabulary, scores 0 with the reason; a missing task (``None``)
is "not applicable" (``None``), and so is a task that cannot be read — the policy is
not punished for bad data. A chat-format completion (a list of messages) is scored on
its last assistant message's text.
"""

from __future__ import annotations

import json
import math
from typing import Any

from groundrl.sim.execute import execute
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import vocab_names
from groundrl.types import Score

NAME = "sim"


def _text(completion: Any) -> str | None:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and all(isinstance(m, dict) for m in completion):
        for m in reversed(completion):
            if m.get("role", "assistant") == "assistant":
                c = m.get("content")
                if isinstance(c, str):
                    return c
                if isinstance(c, list):  # multimodal parts: their text
                    return "\n".join(
                        p["text"] for p in c if isinstance(p, dict) and isinstance(p.get("text"), str)
                    )
                return None
    return None


def _task(task: Any) -> tuple[Task | None, str]:
    if isinstance(task, Task):
        return task, ""
    if isinstance(task, str):
        try:
            task = json.loads(task)
        except ValueError as e:
            return None, f"task is not JSON ({e})"
    if not isinstance(task, dict):
        return None, f"task is a {type(task).__name__}, not a Task or its JSON dict"
    try:
        return Task.from_json(task), ""
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return None, f"task cannot be read ({type(e).__name__}: {e})"


def sim_reward(
    completion: Any,
    task: Any,
    *,
    success_bonus: float = 1.0,
    vocab: str = "auto",
    max_steps: int = 30,
    max_invalid: int = 10,
) -> Score:
    """Score ``completion`` (text in any plan vocabulary) by executing it on ``task``
    (a :class:`~groundrl.sim.tasks.Task`, its ``to_json()`` dict, or that dict as a JSON
    string, as a dataset column carries it). Total: any input gives a :class:`Score`
    named ``"sim"``; only bad settings raise."""
    if not (isinstance(success_bonus, (int, float)) and math.isfinite(success_bonus) and success_bonus >= 0):
        raise ValueError(f"success_bonus must be a finite number ≥ 0, got {success_bonus!r}")
    if vocab != "auto" and vocab not in vocab_names():
        raise ValueError(f"vocab must be 'auto' or one of {vocab_names()}, got {vocab!r}")
    if max_steps < 1 or max_invalid < 1:
        raise ValueError(f"max_steps and max_invalid must be ≥ 1, got {max_steps} and {max_invalid}")
    if task is None:
        return Score(NAME, None, "no task in the sample")
    t, why = _task(task)
    if t is None:
        return Score(NAME, None, why)
    text = _text(completion)
    if text is None:
        return Score(NAME, 0.0, f"completion is a {type(completion).__name__}, not text")
    if not text.strip():
        return Score(NAME, 0.0, "empty completion")
    r = execute(t, text, vocab=vocab, max_steps=max_steps, max_invalid=max_invalid)
    if r.steps == 0:
        return Score(NAME, 0.0, f"no plan step could be run: {r.error or 'no actions found'}")
    value = r.progress + (success_bonus if r.success else 0.0)
    last = r.feedback[-1] if r.feedback else ""
    return Score(
        NAME,
        value,
        f"progress {r.progress:.2f}{' + success bonus' if r.success else ''}; "
        f"{r.steps} step{'' if r.steps == 1 else 's'} ({r.invalid_steps} invalid, vocab {r.vocab}); last: {last}",
    )


__all__ = ["sim_reward"]
