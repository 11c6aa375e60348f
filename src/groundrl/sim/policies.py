"""Policies for ``groundrl sim eval``: what answers "what is your plan?" in the
EB-ALFRED loop (:mod:`groundrl.sim.evaluate`).

The protocol is the agent's view of an episode::

    plan(instruction, observation, image, feedback_history) -> str | list

``observation`` is the environment's textual observation, ``image`` a rendered
top-down drawing (:func:`groundrl.sim.render.render_scene`) or ``None`` unless the
policy sets ``needs_image = True``, and ``feedback_history`` the steps executed so far
as :class:`Feedback` records. The answer is a plan in any supported vocabulary (see
:mod:`groundrl.sim.vocab`): text, a list of steps, or an EB-ALFRED JSON object with an
``executable_plan``. An empty plan ends the episode (EB-ALFRED); an unreadable one
counts as an invalid action and the policy is asked again.

Optional hooks, looked up with ``getattr``:

* ``reset(task, env)`` — called at the start of every episode. Oracle policies
  (``expert``, ``gold``, ``file``, ``random``) read the task and the live episode there;
  they must not step ``env``.
* ``vocab`` — the vocabulary of the plans (default ``"auto"``: detected per plan).
* ``plan_batch(requests) -> plans`` — answer many :class:`PlanRequest` s at once; the
  evaluator then runs episodes in lockstep and asks in batches (model backends batch
  and run requests concurrently). ``reset`` is not called for such a policy: each
  request carries its task.

The model seam: :class:`ModelPolicy` wraps any object with the judge backends'
``generate(requests, params) -> [Generation]`` method (:mod:`groundrl.judges`:
``openai`` for vLLM / SGLang / any OpenAI-compatible server, ``transformers`` for a
local checkpoint, or a registered plugin backend). :func:`make_model_policy` builds one
from the CLI's ``--judge-backend/--judge-model/--judge-url`` through
:class:`~groundrl.judges.config.JudgeConfig`; ``groundrl.judges`` is imported only then.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from groundrl.io import JsonlError, iter_lines
from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, format_plan, get_vocab, render_plan, vocab_names
from groundrl.sim.world import Env, Obj, Scene

if TYPE_CHECKING:  # groundrl.judges loads only for --policy model
    from groundrl.judges.base import ContentPart, Request

POLICIES = ("expert", "gold", "random", "file", "model")

#: A plan as a policy answers it: text, a list of steps, or a JSON object (EB-ALFRED's
#: ``executable_plan``); only :func:`~groundrl.sim.vocab.split_plan` reads inside it.
Plan = str | list[Any] | dict[str, object]


@dataclass(frozen=True)
class Feedback:
    """One executed step: the plan step as the policy wrote it, the skill it became
    (``None`` when it could not be read or resolved) and the environment's feedback."""

    action: str
    feedback: str
    skill: str | None = None

    @property
    def ok(self) -> bool:
        return self.feedback.startswith("Last action executed successfully")


@dataclass
class PlanRequest:
    """What a batched policy is asked: the protocol's four arguments plus the task (so
    a stateless batched policy can, for example, list the scene's actions)."""

    task: Task
    instruction: str
    observation: str
    image: Any
    feedback_history: tuple[Feedback, ...]


class Policy(Protocol):
    """``plan(instruction, observation, image | None, feedback_history) -> str | list``
    (see the module docstring for the optional ``reset``, ``vocab``, ``needs_image``
    and ``plan_batch``)."""

    name: str

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Feedback]
    ) -> Plan: ...


class _OnePlan:
    """Open-loop policies: one plan per episode; asked again, they answer the empty
    plan, which ends the episode (EB-ALFRED stops on an empty plan)."""

    needs_image = False

    def __init__(self) -> None:
        self._asked = False

    def reset(self, task: Task, env: Env) -> None:
        self._asked = False

    def _once(self, plan: Plan | None) -> Plan:
        if self._asked or plan is None:
            return []
        self._asked = True
        return plan


class ExpertPolicy:
    """The expert planner (:func:`groundrl.sim.planner.expert_plan`) as an oracle: a
    shortest valid plan from the episode's state, rendered in ``vocab``.

    The first plan is made from the task's initial scene (the episode's state then).
    If asked to re-plan (a step failed, which a valid plan does not do), it plans from
    a snapshot of the live state when that snapshot is exact — hand empty, nothing
    sliced, cleaned, heated or cooled yet (the planner starts from a scene, which cannot
    hold those) — and otherwise answers the empty plan, ending the episode.
    ``plan_seconds`` collects the planner's time per call (``bench/sim.py`` reports it).
    """

    needs_image = False

    def __init__(self, vocab: str = "eb_alfred", max_nodes: int = 200_000) -> None:
        if vocab not in vocab_names():
            raise ValueError(f"expert vocab {vocab!r} is not one of {vocab_names()}")
        self.name = "expert" if vocab == "eb_alfred" else f"expert[{vocab}]"
        self.vocab, self.max_nodes = vocab, max_nodes
        self.plan_seconds: list[float] = []
        self._task: Task | None = None
        self._env: Env | None = None

    def reset(self, task: Task, env: Env) -> None:
        self._task, self._env = task, env

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Feedback]
    ) -> Plan:
        task, env = self._task, self._env
        if task is None or env is None:
            raise RuntimeError("ExpertPolicy.reset(task, env) must be called before plan()")
        scene = task.scene if env.steps == 0 else _exact_snapshot(env)
        if scene is None:
            return []
        t0 = time.perf_counter()
        skills = expert_plan(
            task.goal, scene, max_nodes=self.max_nodes, macros=get_vocab(self.vocab).auto_open
        )
        self.plan_seconds.append(time.perf_counter() - t0)
        if not skills:
            return []
        return format_plan(render_plan(skills, self.vocab, scene), self.vocab)


def _exact_snapshot(env: Env) -> Scene | None:
    """The live state as a scene, or ``None`` when a scene cannot represent it."""
    if env.held is not None or env.sliced or env.clean or env.hot or env.cool:
        return None
    if any(i not in env.static for i in env.order):  # objects made during the episode
        return None
    objs = [Obj(i, env.type_of[i], env.parent[i], dict(env.static[i].attrs)) for i in env.order]
    return Scene(env.scene.room, objs, env.scene.floorplan, set(env.opened), set(env.on))


class GoldPolicy(_OnePlan):
    """The task's own gold plan (ALFRED ``plan.high_pddl`` for trajectories, the expert
    plan for generated tasks), once, in its own vocabulary. EB-ALFRED ``splits.json``
    tasks carry none: the policy answers the empty plan (progress 0)."""

    name = "gold"

    def __init__(self) -> None:
        super().__init__()
        self.vocab = "auto"
        self._gold: list[str] | None = None

    def reset(self, task: Task, env: Env) -> None:
        super().reset(task, env)
        self._gold = task.gold_plan
        self.vocab = task.gold_vocab if task.gold_vocab in vocab_names() else "auto"

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Feedback]
    ) -> Plan:
        return self._once(list(self._gold) if self._gold else None)


class RandomPolicy:
    """Plans of ``length`` actions drawn uniformly from the scene's EB-ALFRED action list
    (:func:`groundrl.sim.vocab.action_space`), re-drawn at every re-plan. The generator
    is seeded per task from ``(seed, task id)``, so an episode's actions do not depend
    on which other tasks run or in what order."""

    needs_image = False
    vocab = "eb_alfred"

    def __init__(self, seed: int = 0, length: int = 5) -> None:
        if length < 1:
            raise ValueError(f"random plan length must be ≥ 1, got {length}")
        self.name, self.seed, self.length = "random", seed, length
        self._rng = random.Random(seed)
        self._actions: list[str] = []

    def reset(self, task: Task, env: Env) -> None:
        self._rng = random.Random(f"{self.seed}|{task.id}")
        self._actions = list(action_space(task.scene).values())

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Feedback]
    ) -> Plan:
        return [self._rng.choice(self._actions) for _ in range(self.length)] if self._actions else []


class FilePolicy(_OnePlan):
    """Pre-computed plans from a JSONL file, one ``{"id": task_id, "plan": …}`` per line
    (``plan``: text, a list of steps, or an EB-ALFRED JSON object; an optional
    ``"vocab"`` names its vocabulary). Open loop: the plan is run once; a task with no
    line gets the empty plan (its ids are in ``missing`` afterwards)."""

    name = "file"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"plans file not found: {p}")
        self.plans: dict[str, tuple[Plan, str]] = {}
        for line in iter_lines(p):
            rec, k = line.value or {}, line.number
            if line.problem or "id" not in rec or "plan" not in rec:
                problem = line.problem or "no `id` / `plan`"
                raise JsonlError(p, k, problem, 'write one JSON object {"id": ..., "plan": ...} per line')
            tid, plan = str(rec["id"]), rec["plan"]
            if tid in self.plans:
                raise ValueError(f"{p}:{k}: a second plan for task id {tid!r}; keep one line per task")
            vocab = rec.get("vocab") or "auto"
            if vocab != "auto" and vocab not in vocab_names():
                raise ValueError(
                    f"{p}:{k}: unknown vocab {vocab!r}; use one of {vocab_names()} or leave it out"
                )
            self.plans[tid] = (plan, vocab)
        self.vocab = "auto"
        self.missing: list[str] = []
        self._plan: Plan | None = None

    def reset(self, task: Task, env: Env) -> None:
        super().reset(task, env)
        plan, self.vocab = self.plans.get(task.id, (None, "auto"))
        if plan is None:
            self.missing.append(task.id)
        self._plan = plan

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Feedback]
    ) -> Plan:
        return self._once(self._plan)


# ---------------------------------------------------------------------------
# the model seam
# ---------------------------------------------------------------------------

SYSTEM_PROMPT = """You are a robot in a household. Accomplish the task with the actions listed below.
Actions and when they are valid:
- "find a X": go next to an X (repeat it to visit the next X). Always valid when an X exists.
- "pick up the X": only when next to X and your hand is empty.
- "put down the object in hand": put what you hold in/on the receptacle you found last; a closed container must be opened first.
- "open the X" / "close the X": an openable X you are next to.
- "turn on the X" / "turn off the X": a toggleable X you are next to.
- "slice the X": while holding a knife, next to X.
Objects are cleaned in a sink basin under a running faucet, heated in a microwave that is turned on, and cooled in a fridge that is closed.
A plan stops at the first failed action and you will be asked again with the feedback."""

OUTPUT_FORMAT = (
    'Answer with one JSON object: {"reasoning_and_reflection": str, "language_plan": str, '
    '"executable_plan": [{"action_id": int, "action_name": str}, ...]} using only the actions listed.'
)


def build_prompt(
    instruction: str,
    observation: str,
    feedback_history: Sequence[Feedback],
    actions: dict[int, str],
    image: Any = None,
    max_history: int = 20,
) -> Request:
    """The chat request a model policy sends (EB-ALFRED-style: system rules, the
    enumerated action list, the instruction, the action history with feedback, and the
    output format of the Reinforced-Reasoning / EB-ALFRED JSON plans)."""
    lines = [f"{k}: {v}" for k, v in actions.items()]
    hist = [
        f"Step {i}: {f.action} -> {f.feedback}"
        for i, f in enumerate(
            feedback_history[-max_history:], start=max(1, len(feedback_history) - max_history + 1)
        )
    ]
    text = "\n".join(
        [
            "Available actions (id: name):",
            *lines,
            "",
            f"Instruction: {instruction}",
            f"Observation: {observation}",
            *(["Action history:", *hist] if hist else []),
            "",
            OUTPUT_FORMAT,
        ]
    )
    content: list[ContentPart] = []
    if image is not None:
        content.append({"type": "image", "image": image})
    content.append({"type": "text", "text": text})
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


class ModelPolicy:
    """A VLM / LLM behind a judge backend plans each round. ``backend`` is any object
    with ``generate(requests, params) -> [Generation]`` (``Generation.text`` or
    ``.error``), such as :meth:`groundrl.judges.JudgeConfig.make_backend`'s. ``sampling`` is passed
    through (``groundrl.judges.SamplingParams``; ``None`` = the backend's default).
    ``prompt`` builds the request (default :func:`build_prompt`). A failed generation
    is an unreadable answer (an invalid action; the policy is asked again)."""

    name = "model"
    vocab = "auto"

    def __init__(
        self,
        backend: Any,
        *,
        image: bool = True,
        sampling: Any = None,
        prompt: Callable[..., Request] = build_prompt,
    ) -> None:
        if not callable(getattr(backend, "generate", None)):
            raise ValueError("ModelPolicy needs a backend with generate(requests, params)")
        self.backend, self.needs_image, self.sampling, self.prompt = backend, image, sampling, prompt
        self.failures: list[str] = []
        self._task: Task | None = None

    def reset(self, task: Task, env: Env) -> None:
        self._task = task

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Feedback]
    ) -> Plan:
        if self._task is None:
            raise RuntimeError("ModelPolicy.reset(task, env) must be called before plan()")
        req = PlanRequest(self._task, instruction, observation, image, tuple(feedback_history))
        return self.plan_batch([req])[0]

    def plan_batch(self, requests: Sequence[PlanRequest]) -> list[Plan]:
        msgs = [
            self.prompt(r.instruction, r.observation, r.feedback_history, action_space(r.task.scene), r.image)
            for r in requests
        ]
        gens = self.backend.generate(msgs, self.sampling)
        out: list[Plan] = []
        for g in gens:
            text = getattr(g, "text", None)
            if not isinstance(text, str) or getattr(g, "error", None):
                self.failures.append(str(getattr(g, "error", None) or "no text"))
                out.append(_UNREADABLE)
            else:
                out.append(text)
        return out

    def close(self) -> None:
        """Release the backend (HTTP sessions, background loops)."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()


_UNREADABLE: dict[str, object] = {"unreadable": "the model backend returned no text"}


def make_model_policy(
    backend: str | None,
    model: str | None,
    url: str | None = None,
    *,
    image: bool = True,
    max_tokens: int = 1024,
    temperature: float = 0.0,
    seed: int | None = None,
) -> ModelPolicy:
    """``--policy model``: a :class:`ModelPolicy` on the judge backend registered under
    ``backend`` (:class:`groundrl.judges.config.JudgeConfig`, the path every command's
    ``--judge-*`` flags take, so a plugin backend works here too)."""
    if not backend:
        raise ValueError(
            "--policy model needs a backend: --judge-backend openai --judge-model NAME "
            "--judge-url http://127.0.0.1:8000/v1 (any OpenAI-compatible server such as vLLM), "
            "or --judge-backend transformers --judge-model /path/to/checkpoint"
        )
    try:
        # lazy: the judges and their optional backends load only for --policy model
        from groundrl.judges import SamplingParams
        from groundrl.judges.config import JudgeConfig
    except ModuleNotFoundError as e:
        raise ValueError(
            f"--policy model needs groundrl.judges, which cannot be imported here ({e}); "
            "install groundrl with its judge backends (and the train extra for --judge-backend transformers)"
        ) from e
    try:
        config = JudgeConfig(backend=backend, model=model or "", url=url)
    except ValueError as e:
        raise ValueError(
            f"--policy model: {e} (set it with --judge-backend / --judge-model / --judge-url)"
        ) from None
    return ModelPolicy(
        config.make_backend(),
        image=image,
        sampling=SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed),
    )


@dataclass
class PolicyOptions:
    """Everything :func:`make_policy` may need, so the CLI passes one object."""

    plans: str | Path | None = None
    seed: int = 0
    random_length: int = 5
    expert_vocab: str = "eb_alfred"
    judge_backend: str | None = None
    judge_model: str | None = None
    judge_url: str | None = None
    image: bool = True
    max_tokens: int = 1024


def make_policy(name: str, options: PolicyOptions | None = None) -> Any:
    """A policy by name (:data:`POLICIES`); raises ``ValueError`` saying what to pass."""
    o = options or PolicyOptions()
    if name == "expert":
        return ExpertPolicy(o.expert_vocab)
    if name == "gold":
        return GoldPolicy()
    if name == "random":
        return RandomPolicy(o.seed, o.random_length)
    if name == "file":
        if not o.plans:
            raise ValueError('--policy file needs --plans PLANS.jsonl (lines {"id": task_id, "plan": ...})')
        return FilePolicy(o.plans)
    if name == "model":
        return make_model_policy(
            o.judge_backend, o.judge_model, o.judge_url, image=o.image, max_tokens=o.max_tokens, seed=o.seed
        )
    raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(POLICIES)}")
