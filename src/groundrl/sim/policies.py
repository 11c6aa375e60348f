"""Policies for ``groundrl sim eval``: given the instruction, a textual observation, an
optional image and the feedback so far, return a plan in any supported vocabulary."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Protocol

from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, render_plan
from groundrl.sim.world import Env

POLICIES = ("expert", "gold", "random", "file", "model")


class Policy(Protocol):
    """``plan(task, env, feedback) -> plan`` (text, list of steps, or parsed JSON).
    ``env`` is the live episode: a policy may read ``env.observation()`` (and render an
    image with :func:`groundrl.sim.render.render_scene`) but must not step it."""

    name: str

    def plan(self, task: Task, env: Env, feedback: list[str]) -> Any: ...


class ExpertPolicy:
    """Plans from the current state with the expert planner (EB-ALFRED vocabulary)."""

    name = "expert"

    def plan(self, task: Task, env: Env, feedback: list[str]) -> Any:
        from groundrl.sim.goals import satisfied

        # re-plan from the live state: a scene snapshot with the current placements
        snap = _snapshot(env)
        skills = expert_plan(task.goal, snap)
        if skills is None or satisfied(task.goal, env):
            return []
        return render_plan(skills, "eb_alfred", snap)


def _snapshot(env: Env):
    from groundrl.sim.world import Obj, Scene

    objs = [Obj(i, env.type_of[i], env.parent[i], dict(env.static[i].attrs)) for i in env.order]
    return Scene(env.scene.room, objs, env.scene.floorplan, set(env.opened), set(env.on))


class GoldPolicy:
    """The task's own gold plan (ALFRED ``high_pddl``, or a generated task's gold)."""

    name = "gold"

    def plan(self, task: Task, env: Env, feedback: list[str]) -> Any:
        if not task.gold_plan:
            return []
        return task.gold_plan if not feedback else []  # the gold plan is open-loop


class RandomPolicy:
    """Uniformly random EB-ALFRED actions from the scene's action space (seeded)."""

    name = "random"

    def __init__(self, seed: int = 0, length: int = 10) -> None:
        self.rng = random.Random(seed)
        self.length = length

    def plan(self, task: Task, env: Env, feedback: list[str]) -> Any:
        names = list(action_space(task.scene).values())
        return [self.rng.choice(names) for _ in range(self.length)]


class FilePolicy:
    """Pre-computed plans from a JSONL of ``{"id": task_id, "plan": …}`` (open-loop)."""

    name = "file"

    def __init__(self, path: str | Path) -> None:
        self.plans: dict[str, Any] = {}
        for k, line in enumerate(Path(path).read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                self.plans[str(rec["id"])] = rec["plan"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f'{path}:{k}: expected {{"id": ..., "plan": ...}}: {e}') from e

    def plan(self, task: Task, env: Env, feedback: list[str]) -> Any:
        return self.plans.get(task.id, []) if not feedback else []


class ModelPolicy:
    """A VLM or LLM behind a :mod:`groundrl.judges` backend: prompted with the
    instruction, the observation, the feedback so far and the action list, it answers in
    the EB-ALFRED JSON format."""

    name = "model"

    def __init__(self, backend: Any, image: bool = False, max_tokens: int = 512) -> None:
        self.backend, self.image, self.max_tokens = backend, image, max_tokens

    def plan(self, task: Task, env: Env, feedback: list[str]) -> Any:
        from groundrl.judges import SamplingParams

        actions = "\n".join(f"{k}: {v}" for k, v in action_space(task.scene).items())
        text = (
            f"Instruction: {task.instruction}\nObservation: {env.observation()}\n"
            + (f"Feedback so far: {' | '.join(feedback[-5:])}\n" if feedback else "")
            + f"Available actions:\n{actions}\nAnswer with a JSON object with keys language_plan and executable_plan "
            '(a list of {"action_id": int, "action_name": str}).'
        )
        content: list[dict[str, Any]] = []
        if self.image:
            from groundrl.sim.render import render_scene

            content.append({"type": "image", "image": render_scene(env)})
        content.append({"type": "text", "text": text})
        gen = self.backend.generate(
            [[{"role": "user", "content": content}]], SamplingParams(max_tokens=self.max_tokens)
        )[0]
        return gen.text or ""


def make_policy(name: str, plans: str | None = None, seed: int = 0, backend: Any = None) -> Policy:
    if name == "expert":
        return ExpertPolicy()
    if name == "gold":
        return GoldPolicy()
    if name == "random":
        return RandomPolicy(seed)
    if name == "file":
        if not plans:
            raise ValueError("--policy file needs --plans PLANS.jsonl")
        return FilePolicy(plans)
    if name == "model":
        if backend is None:
            raise ValueError(
                "--policy model needs --judge-backend/--judge-model (and --judge-url for openai)"
            )
        return ModelPolicy(backend)
    raise ValueError(f"unknown policy {name!r}; choose one of {POLICIES}")
