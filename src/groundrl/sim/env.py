"""The household simulator as a Gymnasium environment, for multi-turn RL.

``HouseholdEnv`` (registered as ``groundrl/Household-v0``) runs one EB-ALFRED episode
per ``reset``:

* ``reset(seed=…, options={"task": …})`` → ``(observation, info)``. ``task`` is a
  :class:`~groundrl.sim.tasks.Task`, its JSON dict, or the id of a task in the env's
  pool; without it a task is drawn from the pool with the env's seeded ``np_random``.
* ``step(action_text)`` → ``(observation, reward, terminated, truncated, info)``. The
  text is one action, or a plan of several (lines, an EB-ALFRED ``executable_plan``,
  an EmbodiedBrain ``<actions>`` list), in any of the five vocabularies
  (:data:`groundrl.sim.vocab.VOCABS`; ``vocab="auto"`` detects it). The actions run in
  order until one fails or the episode ends — EB-ALFRED's loop, one policy turn per
  ``step``. Each action is one environment step; text from which no action can be read
  is one invalid step (so every ``step`` spends budget and an episode always ends).
* ``terminated`` when every goal condition holds (success); ``truncated`` when the
  step budget (``max_steps``, EB-ALFRED 30) or the invalid-action budget
  (``max_invalid``, 10) is spent without success. Stepping a finished episode raises
  (Gymnasium's contract: call ``reset``).

Observation (a ``Dict`` space of ``Text`` — plus a ``Box`` image when ``image=True``):
``instruction``, ``text`` (the EB-ALFRED-style text state,
:meth:`groundrl.sim.world.Env.observation`), ``feedback`` (the last action's
EB-ALFRED feedback; ``""`` after ``reset``) and ``image`` (the top-down render,
448×448×3 ``uint8``). Characters outside printable ASCII are replaced by ``?`` so the
observation always lies in its space.

Info: ``task_id``, ``subset``, ``task_type``, ``feedback`` (one line per action run
this turn), ``actions`` (the step labels), ``progress`` (satisfied goal conditions /
all), ``conditions`` ``(satisfied, total)``, ``success``, ``steps``, ``invalid_steps``,
``max_steps``, ``max_invalid``, ``vocab`` (the vocabulary read) and ``end``
(``"success"`` / ``"step budget"`` / ``"invalid budget"`` / ``""``).

Rewards (``reward=``):

* ``"sparse"`` — ``success_bonus`` on the step that succeeds, else 0;
* ``"progress"`` — the change in progress rate this step (so an episode's rewards sum
  to its final progress rate), plus ``success_bonus`` on success;
* ``"plan"`` — 0 until the episode ends, then ``progress + success_bonus · success``:
  exactly :func:`groundrl.sim.reward.sim_reward` of the whole plan the agent ran
  (every action of every turn, in order).

``invalid_penalty`` (default 0) is subtracted per invalid action in every mode.

``HouseholdVectorEnv`` steps many episodes at once (one ``HouseholdEnv`` each, in
lockstep, no processes): ``step(list_of_texts)`` returns arrays of rewards and flags
and observations as a dict of lists. Its autoreset mode is ``DISABLED``: a finished
episode stays finished (its later steps are no-ops with reward 0) until
``reset(options={"reset_mask": …})`` — the shape of a rollout batch of one episode per
prompt.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from groundrl.sim.execute import run_plan_steps
from groundrl.sim.generate import generate_tasks
from groundrl.sim.goals import progress, satisfied
from groundrl.sim.render import render_scene
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import opens_containers, split_plan, vocab_names
from groundrl.sim.world import Env

ENV_ID = "groundrl/Household-v0"
REWARDS = ("sparse", "progress", "plan")
IMAGE_SIZE = 448
#: Longest text an observation field or an action may hold.
MAX_TEXT = 65_536
CHARSET = frozenset(string.printable)


def _ascii(s: str) -> str:
    if all(c in CHARSET for c in s):
        return s[:MAX_TEXT]
    return "".join(c if c in CHARSET else "?" for c in s[:MAX_TEXT])


def _label(step: Any) -> str:
    return step if isinstance(step, str) else repr(step)[:200]


def _as_task(x: Any, pool: dict[str, Task]) -> Task:
    if isinstance(x, Task):
        return x
    if isinstance(x, dict):
        return Task.from_json(x)
    if isinstance(x, str):
        if x in pool:
            return pool[x]
        raise ValueError(f"no task {x!r} in this environment's pool ({len(pool)} tasks)")
    raise TypeError(f"options['task'] must be a Task, its JSON dict or a task id, not {type(x).__name__}")


class Observation(TypedDict):
    """:class:`HouseholdEnv`'s observation (``image`` with ``image=True``)."""

    instruction: str
    text: str
    feedback: str
    image: NotRequired[np.ndarray]


class StepInfo(TypedDict):
    """:class:`HouseholdEnv`'s ``info``: the task, what the turn ran and what it
    achieved (``actions`` / ``feedback``: one entry per environment step of the turn)."""

    task_id: str
    subset: str
    task_type: str
    actions: list[str]
    feedback: list[str]
    progress: float
    conditions: tuple[int, int]
    success: bool
    steps: int
    invalid_steps: int
    max_steps: int
    max_invalid: int
    vocab: str | None
    end: str


class HouseholdEnv(gym.Env):
    """A multi-turn household episode (see the module docstring).

    ``tasks``: the pool ``reset`` draws from when no task is given (default: 60
    procedural tasks, seed 0); ``vocab``: the action vocabulary (or ``"auto"``);
    ``image``: add the rendered image to the observation; ``render_mode``:
    ``"rgb_array"`` or ``None``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        tasks: Sequence[Task] | None = None,
        *,
        vocab: str = "auto",
        reward: str = "progress",
        success_bonus: float = 1.0,
        invalid_penalty: float = 0.0,
        max_steps: int = 30,
        max_invalid: int = 10,
        image: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if vocab != "auto" and vocab not in vocab_names():
            raise ValueError(f"vocab must be 'auto' or one of {vocab_names()}, got {vocab!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if max_steps < 1 or max_invalid < 1:
            raise ValueError(f"max_steps and max_invalid must be ≥ 1, got {max_steps} and {max_invalid}")
        if not (np.isfinite(success_bonus) and success_bonus >= 0):
            raise ValueError(f"success_bonus must be a finite number ≥ 0, got {success_bonus!r}")
        if not (np.isfinite(invalid_penalty) and invalid_penalty >= 0):
            raise ValueError(f"invalid_penalty must be a finite number ≥ 0, got {invalid_penalty!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        if tasks is None:
            tasks = generate_tasks(60, seed=0)
        self.tasks = list(tasks)
        if not self.tasks:
            raise ValueError("HouseholdEnv needs at least one task")
        self._pool = {t.id: t for t in self.tasks}
        self.vocab, self.reward_mode = vocab, reward
        self.success_bonus, self.invalid_penalty = float(success_bonus), float(invalid_penalty)
        self.max_steps, self.max_invalid = max_steps, max_invalid
        self.image, self.render_mode = image, render_mode
        text = spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET)
        fields: dict[str, spaces.Space] = {"instruction": text, "text": text, "feedback": text}
        if image:
            fields["image"] = spaces.Box(0, 255, (IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8)
        self.observation_space: spaces.Dict = spaces.Dict(fields)
        self.action_space = spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET)
        self.task: Task | None = None
        self.sim: Env | None = None
        self.plan: list[Any] = []  # every action run this episode (the "plan" reward's plan)
        self._progress = 0.0
        self._end = ""

    # -- gymnasium API -------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if options.get("task") is not None:
            task = _as_task(options["task"], self._pool)
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        self.task = task
        self.sim = task.env(self.max_steps, self.max_invalid)
        if opens_containers(self.vocab):
            self.sim.auto_open = True  # that vocabulary has no open/close
        self.plan = []
        self._end = ""
        done, total = progress(task.goal, self.sim)
        self._progress = done / total if total else 0.0
        return self._obs(""), self._info([], [], None)

    def step(self, action: Any):
        sim, task = self.sim, self.task
        if sim is None or task is None:
            raise RuntimeError("call reset() before step()")
        if self._end:
            raise RuntimeError("the episode is over; call reset()")
        labels, feedback, vocab = self._run(action)
        done, total = progress(task.goal, sim)
        success = done == total
        prog = done / total if total else 0.0
        terminated = success
        truncated = not success and (sim.steps >= sim.max_steps or sim.invalid_steps >= sim.max_invalid)
        self._end = (
            "success"
            if success
            else ("step budget" if sim.steps >= sim.max_steps else "invalid budget")
            if truncated
            else ""
        )
        bonus = self.success_bonus if success else 0.0
        if self.reward_mode == "sparse":
            reward = bonus
        elif self.reward_mode == "progress":
            reward = prog - self._progress + bonus
        else:
            reward = prog + bonus if (terminated or truncated) else 0.0
        n_invalid = sum(1 for f in feedback if not f.startswith("Last action executed successfully"))
        reward -= self.invalid_penalty * n_invalid
        self._progress = prog
        obs = self._obs(feedback[-1] if feedback else "")
        return obs, float(reward), terminated, truncated, self._info(labels, feedback, vocab)

    def render(self):
        if self.render_mode != "rgb_array" or self.sim is None:
            return None
        return self._image()

    # -- internals -------------------------------------------------------------------

    def _run(self, action: Any) -> tuple[list[str], list[str], str | None]:
        """Run one turn's actions until one fails or the episode ends."""
        sim = self.sim
        assert sim is not None
        if isinstance(action, str) and not action.strip():
            res = sim.step(None, why_unparsed="Empty action.")
            self.plan.append("")
            return [""], [res.feedback], None
        steps, vocab, err = split_plan(action, self.vocab)
        if err or not steps or (vocab is None and self.vocab == "auto"):
            why = err or "No action could be read in any vocabulary."
            res = sim.step(None, why_unparsed=why)
            self.plan.append(_label(action))
            return [_label(action)[:200]], [res.feedback], vocab
        if opens_containers(vocab):
            sim.auto_open = True
        labels: list[str] = []
        feedback: list[str] = []

        def record(raw: Any, skill: Any, res: Any) -> None:
            labels.append(_label(raw))
            feedback.append(res.feedback)

        run_plan_steps(sim, steps, vocab, record, on_action=self.plan.append)
        if not feedback:  # only no-ops: an invalid step, so the turn spends budget
            res = sim.step(None, why_unparsed="The plan holds only no-op actions.")
            labels.append(_label(action))
            feedback.append(res.feedback)
        return labels, feedback, vocab

    def _image(self) -> np.ndarray:
        assert self.sim is not None
        return np.asarray(render_scene(self.sim, IMAGE_SIZE), dtype=np.uint8)

    def _obs(self, feedback: str) -> Observation:
        assert self.sim is not None and self.task is not None
        obs: Observation = {
            "instruction": _ascii(self.task.instruction),
            "text": _ascii(self.sim.observation()),
            "feedback": _ascii(feedback),
        }
        if self.image:
            obs["image"] = self._image()
        return obs

    def _info(self, labels: list[str], feedback: list[str], vocab: str | None) -> StepInfo:
        sim, task = self.sim, self.task
        assert sim is not None and task is not None
        done, total = progress(task.goal, sim)
        return {
            "task_id": task.id,
            "subset": task.subset,
            "task_type": task.task_type,
            "actions": labels,
            "feedback": feedback,
            "progress": done / total if total else 0.0,
            "conditions": (done, total),
            "success": satisfied(task.goal, sim),
            "steps": sim.steps,
            "invalid_steps": sim.invalid_steps,
            "max_steps": sim.max_steps,
            "max_invalid": sim.max_invalid,
            "vocab": vocab,
            "end": self._end,
        }


class HouseholdVectorEnv(VectorEnv):
    """``num_envs`` household episodes stepped in lockstep (see the module docstring).

    ``reset(seed=s, options={"tasks": [...]})`` starts one episode per entry (tasks,
    their JSON, or pool ids; ``None`` entries are drawn, env ``i`` seeded ``s + i``);
    ``options={"reset_mask": mask}`` restarts only the masked episodes. Observations are
    a dict of lists (one entry per episode); rewards, ``terminated`` and ``truncated``
    are NumPy arrays; ``info`` is a dict of lists (Gymnasium's vector form) with
    ``_done`` marking episodes that had already ended before this step.
    """

    metadata = {"autoreset_mode": AutoresetMode.DISABLED, "render_modes": []}

    def __init__(self, num_envs: int, tasks: Sequence[Task] | None = None, **kwargs: Any) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be ≥ 1, got {num_envs}")
        if tasks is None:
            tasks = generate_tasks(60, seed=0)
        tasks = list(tasks)
        self.envs = [HouseholdEnv(tasks, **kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.single_observation_space: spaces.Dict = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = spaces.Tuple([self.single_observation_space] * num_envs)
        self.action_space = spaces.Tuple([self.single_action_space] * num_envs)
        self._over = np.zeros(num_envs, dtype=bool)
        self._last: list[Observation | None] = [None] * num_envs  # None: not reset yet

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        options = dict(options or {})
        mask = np.asarray(options.pop("reset_mask", np.ones(self.num_envs, dtype=bool)), dtype=bool)
        if mask.shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},)")
        tasks = options.pop("tasks", None)
        if tasks is not None and len(tasks) != self.num_envs:
            raise ValueError(f"options['tasks'] must hold {self.num_envs} entries, got {len(tasks)}")
        seeds = (
            list(seed)
            if isinstance(seed, Sequence)
            else [None if seed is None else seed + i for i in range(self.num_envs)]
        )
        infos: dict[str, list[Any]] = {}
        for i, env in enumerate(self.envs):
            if mask[i]:
                o = {"task": tasks[i]} if tasks is not None and tasks[i] is not None else None
                obs, info = env.reset(seed=seeds[i], options=o)
                self._over[i] = False
                self._last[i] = obs
            else:
                info = {}
            for k, v in info.items():
                infos.setdefault(k, [None] * self.num_envs)[i] = v
        return self._stack(), infos

    def step(self, actions: Sequence[Any]):
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        term = np.zeros(self.num_envs, dtype=bool)
        trunc = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, list[Any]] = {"_done": [bool(x) for x in self._over]}
        for i, (env, a) in enumerate(zip(self.envs, actions, strict=True)):
            if self._over[i]:
                term[i] = bool(env._end == "success")
                trunc[i] = not term[i]
                continue
            obs, r, te, tr, info = env.step(a)
            rewards[i], term[i], trunc[i] = r, te, tr
            self._last[i] = obs
            self._over[i] = te or tr
            for k, v in info.items():
                infos.setdefault(k, [None] * self.num_envs)[i] = v
        return self._stack(), rewards, term, trunc, infos

    @property
    def done(self) -> np.ndarray:
        """Which episodes have ended."""
        return self._over.copy()

    def _stack(self) -> dict[str, list[Any]]:
        keys = list(self.single_observation_space.spaces)
        return {k: [o.get(k) if o is not None else None for o in self._last] for k in keys}

    def close_extras(self, **kwargs: Any) -> None:
        for e in self.envs:
            e.close()


def make_env(**kwargs: Any) -> HouseholdEnv:
    """``HouseholdEnv(**kwargs)`` (the Gymnasium entry point)."""
    return HouseholdEnv(**kwargs)


def make_vector_env(num_envs: int, **kwargs: Any) -> HouseholdVectorEnv:
    return HouseholdVectorEnv(num_envs, **kwargs)


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium (idempotent; done on import)."""
    if ENV_ID not in gym.registry:
        gym.register(
            ENV_ID,
            entry_point="groundrl.sim.env:make_env",
            vector_entry_point="groundrl.sim.env:make_vector_env",
            disable_env_checker=False,
        )


register()

__all__ = ["ENV_ID", "REWARDS", "HouseholdEnv", "HouseholdVectorEnv", "make_env", "register"]
