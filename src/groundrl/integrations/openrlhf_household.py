"""OpenRLHF 0.11 multi-turn agent: the household simulator in the loop of OpenRLHF's
``MultiTurnAgentExecutor`` (``--train.agent_func_path``).

OpenRLHF loads this file by path on every vLLM rollout actor
(``openrlhf.trainer.ray.vllm_engine._load_agent_executor``: it execs the file, takes its
``AgentExecutor`` attribute, checks it subclasses ``AgentExecutorBase`` and calls it
with no arguments). :class:`AgentExecutor` is a ``MultiTurnAgentExecutor`` over
:class:`AgentInstance`; the executor makes one instance per sample and drives it:

1. ``reset({"observation": prompt, "label": label})``: the sample's label is the task
   (a :class:`~groundrl.sim.tasks.Task` as JSON text, written by
   :func:`write_prompt_dataset`); one :class:`~groundrl.sim.env.HouseholdEnv` is built
   for the episode and reset on that task. The prompt goes back unchanged.
2. ``step({"action_text": …})`` per policy turn: the turn's text (trailing EOS /
   end-of-turn tokens removed, :func:`groundrl.integrations.common.strip_stop_tokens`)
   is one ``HouseholdEnv.step`` — the plan runs until an action fails or the episode
   ends. If the episode goes on, the environment's feedback,
   :func:`groundrl.sim.episode_feedback.default_feedback_text`, is returned as
   ``environment_feedback``: by default (``GROUNDRL_ENV_FEEDBACK_ROLE=user``) as a user
   turn of the tokenizer's chat template
   (:func:`groundrl.sim.episode_feedback.chat_feedback_text`, with the tokenizer the executor
   was given: the close of the policy's turn, the user turn, the next assistant turn's
   generation prompt), or with ``raw`` as text through
   ``GROUNDRL_ENV_FEEDBACK_TEMPLATE``. The executor tokenises it and appends it to the
   context *outside* every action range, so its tokens get ``action_mask`` 0 (and
   logprob 0), and the policy re-plans from there. ``done`` when the environment terminates (success) or
   truncates (step / invalid budget) or after ``max_turns`` turns; the last turn's
   feedback is ``""`` (the executor would otherwise append it to the sequence).

The episode semantics are those of the TRL rollout
(:class:`groundrl.train.multiturn.EnvRollout`) and so is the reward: the executor sums
the per-step ``rewards`` (``total_reward += rewards.item()``) into the sample's
``reward``, so each step returns the environment's reward of that turn, minus
``turn_penalty`` on every turn after the first, and the turn that ends an episode cut by
``max_turns`` with ``reward="plan"`` also carries the episode's progress (the payout
that ``sim_reward`` of the plan run so far would give). The sum is EnvRollout's episode
reward; with the default ``reward="plan"`` it is ``progress + success_bonus·success -
turn_penalty·(turns - 1)``. ``scores`` (read by ``--algo.dynamic_filtering_enable``:
OpenRLHF keeps the *last* step's value) is the episode reward so far, i.e. the episode
reward at the end. ``extra_logs`` (the last step's; OpenRLHF logs each key) are
``env_success``, ``env_progress``, ``env_turns``, ``env_steps`` and
``env_context_cut``.

The executor also stops, without asking the agent, when the context is full
(``--data.max_len`` tokens: it gives each turn the whole rest of the context as
``max_tokens``). :class:`AgentExecutor` settles such an episode as one cut by
``max_turns`` (the progress payout with ``reward="plan"``) and logs
``env_context_cut`` 1 — raise ``--data.max_len`` when that is frequent.

Settings: OpenRLHF passes the agent no arguments, so they come from environment
variables on the rollout actors (set them in the job's ``runtime_env``), one per
setting, in the style of ``GROUNDRL_OPTION_<NAME>`` (:func:`groundrl.integrations.common.env_config`):

* ``GROUNDRL_ENV_MAX_TURNS`` (3): policy turns per episode;
* ``GROUNDRL_ENV_REWARD`` (``plan``): ``plan``, ``progress`` or ``sparse`` (see
  :mod:`groundrl.sim.env`);
* ``GROUNDRL_ENV_SUCCESS_BONUS`` (1.0), ``GROUNDRL_ENV_INVALID_PENALTY`` (0.0),
  ``GROUNDRL_ENV_TURN_PENALTY`` (0.0), ``GROUNDRL_ENV_MAX_STEPS`` (30),
  ``GROUNDRL_ENV_MAX_INVALID`` (10), ``GROUNDRL_ENV_VOCAB`` (``auto``);
* ``GROUNDRL_ENV_FEEDBACK_ROLE`` (``user``): ``user`` — the feedback is a user turn of
  the chat template (prompts rendered with ``--data.apply_chat_template``; the policy's
  turn is taken to end with the tokenizer's EOS, which is where vLLM stops unless the
  context is full, and then no turn follows); ``raw`` — the text as is;
* ``GROUNDRL_ENV_FEEDBACK_TEMPLATE`` (``{feedback}``, ``raw`` only): the text between
  turns, with ``{feedback}`` replaced by ``default_feedback_text``;
* ``GROUNDRL_STOP_TOKENS``: the stop tokens removed from a turn's text
  (:func:`groundrl.integrations.common.env_stop_tokens`).

An unknown ``GROUNDRL_ENV_*`` name or a bad value raises ``ValueError`` naming the
variable when OpenRLHF builds the executor (the rollout actor's start), not mid-run.

Command line (the flags of ``openrlhf.cli.train_ppo_ray`` in OpenRLHF 0.11; see
``examples/openrlhf/household_multiturn.sh``)::

    python -c "from groundrl.integrations.openrlhf_household import write_prompt_dataset; \\
        from groundrl.sim.generate import generate_tasks; \\
        write_prompt_dataset(generate_tasks(512, seed=0), 'household.jsonl')"
    python3 -m openrlhf.cli.train_ppo_ray \\
        --train.agent_func_path "$(python -c 'import groundrl.integrations.openrlhf_household as m; print(m.__file__)')" \\
        --data.prompt_dataset household.jsonl --data.input_key input --data.label_key label \\
        --data.max_len 4096 --rollout.n_samples_per_prompt 8 \\
        --algo.advantage.estimator group_norm ...

(``--train.agent_func_path`` makes OpenRLHF set ``--reward.remote_url`` to ``agent``:
the reward is the agent's.) Importing this module needs no OpenRLHF (the dataset
helpers work anywhere); :class:`AgentExecutor` raises ``ImportError`` when it is absent.
"""

# No ``from __future__ import annotations``: OpenRLHF execs this file as a module that is
# not in ``sys.modules``, where ``@dataclass`` cannot resolve string annotations.
import contextvars
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.integrations.common import env_stop_tokens, strip_stop_tokens
from groundrl.sim.episode import EpisodeOptions
from groundrl.sim.episode_feedback import FEEDBACK_ROLES, chat_feedback_text, default_feedback_text
from groundrl.sim.episode_prompt import prompt as household_prompt
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import vocab_names

try:
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

    _OPENRLHF_ERROR: str | None = None
except ImportError as _e:  # the dataset helpers and the episode logic need no OpenRLHF
    _OPENRLHF_ERROR = f"{type(_e).__name__}: {_e}"

    class AgentInstanceBase:  # type: ignore[no-redef]
        """Stand-in for ``openrlhf.utils.agent.AgentInstanceBase`` (OpenRLHF not installed)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        async def reset(self, states: dict, **kwargs: Any) -> dict:
            return states

    class MultiTurnAgentExecutor:  # type: ignore[no-redef]
        """Stand-in: OpenRLHF is not installed, so there is no executor to run."""

        def __init__(self, agent_instance_cls: Any) -> None:
            raise ImportError(
                "the household agent runs inside OpenRLHF's MultiTurnAgentExecutor; install "
                f"openrlhf>=0.11 on the rollout workers ({_OPENRLHF_ERROR})"
            )


ENV_PREFIX = "GROUNDRL_ENV_"
LOG_KEYS = ("env_success", "env_progress", "env_turns", "env_steps", "env_context_cut")


# ------------------------------------------------------------------------ settings


@dataclass(frozen=True)
class HouseholdAgentConfig(EpisodeOptions):
    """The agent's settings (see the module docstring for the variables): the shared
    episode settings plus the feedback template and stop tokens."""

    feedback_template: str = "{feedback}"
    stop_tokens: tuple[str, ...] | None = None
    feedback_role: str = "user"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "HouseholdAgentConfig":
        """The settings from ``GROUNDRL_ENV_<NAME>`` variables (and
        ``GROUNDRL_STOP_TOKENS``); ``ValueError`` naming the variable to change."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for key, raw in env.items():
            if not key.startswith(ENV_PREFIX):
                continue
            name = key[len(ENV_PREFIX) :].lower()
            if name not in _PARSERS:
                known = ", ".join(ENV_PREFIX + n.upper() for n in _PARSERS)
                raise ValueError(f"{key} is not a setting of the household agent; the settings are {known}")
            values[name] = _PARSERS[name](key, raw)
        stops = env_stop_tokens(env)
        if "feedback_template" in values and values.get("feedback_role", "user") != "raw":
            raise ValueError(
                f"{ENV_PREFIX}FEEDBACK_TEMPLATE shapes raw feedback text; set {ENV_PREFIX}FEEDBACK_ROLE=raw "
                f"with it (the default, user, renders the feedback with the tokenizer's chat template)"
            )
        return cls(**values, stop_tokens=stops)


def _int_at_least_1(key: str, raw: str) -> int:
    try:
        v = int(str(raw).strip())
    except ValueError:
        v = 0
    if v < 1:
        raise ValueError(f"{key} must be an integer ≥ 1, got {raw!r}")
    return v


def _nonneg_float(key: str, raw: str) -> float:
    try:
        v = float(str(raw).strip())
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{key} must be a finite number ≥ 0, got {raw!r}")
    return v


def _reward(key: str, raw: str) -> str:
    # lazy: gymnasium (the optional sim extra) loads only when an episode runs
    from groundrl.sim.env import REWARDS

    v = str(raw).strip()
    if v not in REWARDS:
        raise ValueError(f"{key} must be one of {', '.join(REWARDS)}, got {raw!r}")
    return v


def _vocab(key: str, raw: str) -> str:
    v = str(raw).strip()
    if v != "auto" and v not in vocab_names():
        raise ValueError(f"{key} must be 'auto' or one of {', '.join(vocab_names())}, got {raw!r}")
    return v


def _role(key: str, raw: str) -> str:
    v = str(raw).strip()
    if v not in FEEDBACK_ROLES:
        raise ValueError(f"{key} must be one of {', '.join(FEEDBACK_ROLES)}, got {raw!r}")
    return v


def _template(key: str, raw: str) -> str:
    if "{feedback}" not in raw:
        raise ValueError(
            f"{key} must contain '{{feedback}}' (where the environment's feedback goes), got {raw!r}"
        )
    return raw


_PARSERS: dict[str, Callable[[str, str], Any]] = {
    "max_turns": _int_at_least_1,
    "reward": _reward,
    "success_bonus": _nonneg_float,
    "invalid_penalty": _nonneg_float,
    "turn_penalty": _nonneg_float,
    "max_steps": _int_at_least_1,
    "max_invalid": _int_at_least_1,
    "vocab": _vocab,
    "feedback_template": _template,
    "feedback_role": _role,
}

_configs: dict[tuple[tuple[str, str], ...], HouseholdAgentConfig] = {}


def current_config() -> HouseholdAgentConfig:
    """The settings of this process's environment, parsed once per distinct setting."""
    key = tuple(
        sorted(
            (k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX) or k == "GROUNDRL_STOP_TOKENS"
        )
    )
    if key not in _configs:
        _configs[key] = HouseholdAgentConfig.from_env()
    return _configs[key]


# ------------------------------------------------------------------------ tasks


def task_label(task: Task | Mapping[str, Any]) -> str:
    """A task as the label OpenRLHF hands the agent: its JSON as text."""
    d = task.to_json() if isinstance(task, Task) else dict(task)
    return json.dumps(d, separators=(",", ":"))


def task_from_label(label: Any) -> Task:
    """The task in a sample's label (JSON text, or an already-decoded dict)."""
    hint = (
        "the label must be a household task as JSON: write the prompts with "
        "groundrl.integrations.openrlhf_household.write_prompt_dataset and pass "
        "--data.label_key label to OpenRLHF"
    )
    obj = label
    if isinstance(label, str):
        try:
            obj = json.loads(label)
        except (ValueError, RecursionError):
            obj = None
    if not isinstance(obj, Mapping):
        raise ValueError(f"{hint}; got {str(label)[:80]!r}")
    try:
        return Task.from_json(dict(obj))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{hint}; the label's task does not load ({type(e).__name__}: {e})") from None


def prompt_records(
    tasks: Iterable[Task | Mapping[str, Any]],
    prompt_fn: Callable[[Task], Any] | None = None,
    *,
    input_key: str = "input",
    label_key: str = "label",
) -> list[dict[str, object]]:
    """One OpenRLHF prompt row per task: ``{input_key: prompt, label_key: task JSON
    text, "id": task id}``. ``prompt_fn(task)`` (default
    :func:`groundrl.sim.episode_prompt.prompt`, the TRL demo's ``Instruction: …
    Scene: … Plan:``) may return text or a list of chat messages (then pass
    ``--data.apply_chat_template``; a text prompt works with or without it)."""
    if prompt_fn is None:
        prompt_fn = household_prompt
    if input_key == label_key:
        raise ValueError(f"input_key and label_key must differ, both are {input_key!r}")
    rows: list[dict[str, object]] = []  # keys named by the caller (input_key, label_key)
    for t in tasks:
        task = t if isinstance(t, Task) else Task.from_json(dict(t))
        rows.append({input_key: prompt_fn(task), label_key: task_label(task), "id": task.id})
    return rows


def write_prompt_dataset(
    tasks: Iterable[Task | Mapping[str, Any]],
    path: str | Path,
    prompt_fn: Callable[[Task], Any] | None = None,
    *,
    input_key: str = "input",
    label_key: str = "label",
) -> int:
    """Write :func:`prompt_records` as JSON lines to ``path`` (for
    ``--data.prompt_dataset PATH --data.input_key input --data.label_key label``) and
    return the number of rows. The label is the task's JSON as *text*: OpenRLHF hands
    it to the agent unchanged, while a nested object would go through the Arrow schema
    ``datasets`` infers for the whole file (tasks differ in their keys and object
    lists, so rows would come back with keys filled in as ``None`` or fail to load)."""
    rows = prompt_records(tasks, prompt_fn, input_key=input_key, label_key=label_key)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return len(rows)


# ------------------------------------------------------------------------ the agent

# The instances made during one ``AgentExecutor.execute`` (a per-task context value:
# OpenRLHF gathers the samples of a prompt as concurrent tasks).
_EPISODES: "contextvars.ContextVar[list[AgentInstance] | None]" = contextvars.ContextVar(
    "groundrl_household_episodes", default=None
)
# The tokenizer the executor was handed (``execute(…, hf_tokenizer, …)``): the chat
# template that user-turn feedback is rendered with.
_TOKENIZER: "contextvars.ContextVar[Any]" = contextvars.ContextVar(
    "groundrl_household_tokenizer", default=None
)


class AgentInstance(AgentInstanceBase):
    """One household episode (see the module docstring). ``config`` defaults to the
    process's ``GROUNDRL_ENV_*`` settings (:func:`current_config`)."""

    def __init__(
        self, *args: Any, config: HouseholdAgentConfig | None = None, tokenizer: Any = None, **kwargs: Any
    ) -> None:
        self.config = config or current_config()
        self.tokenizer = tokenizer if tokenizer is not None else _TOKENIZER.get()
        self.env: Any = None
        self.task: Task | None = None
        self.info: dict[str, Any] = {}
        self.turns = 0
        self.total = 0.0  # the episode reward so far (the sum of the step rewards)
        self.done = False
        self.context_cut = False
        box = _EPISODES.get()
        if box is not None:
            box.append(self)

    async def reset(self, states: dict, **kwargs: Any) -> dict:
        # lazy: gymnasium (the optional sim extra) loads only when an episode runs
        from groundrl.sim.env import HouseholdEnv

        self.task = task_from_label(states.get("label"))
        self.env = HouseholdEnv([self.task], **self.config.env_kwargs())
        _, self.info = self.env.reset(options={"task": self.task})
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs: Any) -> dict:
        out = self.turn(states.get("action_text") or "")
        # lazy: torch only for the tensors OpenRLHF takes back
        import torch

        out["rewards"] = torch.tensor(out["rewards"], dtype=torch.float64)
        out["sampling_params"] = states.get("sampling_params")
        return out

    def turn(self, action_text: str) -> dict[str, Any]:
        """Run one policy turn; the step result with ``rewards`` as a float."""
        if self.env is None:
            raise RuntimeError("reset() must come before step()")
        if self.done:
            raise RuntimeError("the episode is over")
        cfg = self.config
        text = strip_stop_tokens(action_text, cfg.stop_tokens)
        obs, reward, terminated, truncated, self.info = self.env.step(text)
        self.turns += 1
        reward = float(reward)
        if self.turns > 1:
            reward -= cfg.turn_penalty
        ended = bool(terminated or truncated)
        cut = not ended and self.turns >= cfg.max_turns
        if cut:
            reward += self.payout()
        self.done = ended or cut
        self.total += reward
        feedback = "" if self.done else self.feedback(default_feedback_text(self.info, obs))
        return {
            "rewards": reward,
            "scores": self.total,
            "environment_feedback": feedback,
            "done": self.done,
            "extra_logs": self.logs(),
        }

    def feedback(self, text: str) -> str:
        """The text appended after a turn: a user turn of the chat template (``user``) or
        the template-wrapped text (``raw``)."""
        if self.config.feedback_role == "raw":
            return self.config.feedback_template.replace("{feedback}", text)
        if self.tokenizer is None:
            raise ValueError(
                f"feedback as a user turn needs the tokenizer (OpenRLHF's executor hands it over); "
                f"pass AgentInstance(tokenizer=…) or set {ENV_PREFIX}FEEDBACK_ROLE=raw"
            )
        return chat_feedback_text(self.tokenizer, text, turn_ended=True)

    def payout(self) -> float:
        """What an episode not ended by the environment gets at its cut: its progress
        with ``reward="plan"`` (as :class:`~groundrl.train.multiturn.EnvRollout`), else 0."""
        return float(self.info.get("progress", 0.0)) if self.config.reward == "plan" else 0.0

    def settle(self) -> float:
        """End an episode the executor stopped (context full): the cut's payout, which
        is added to :attr:`total` and returned."""
        extra = self.payout()
        self.total += extra
        self.done = self.context_cut = True
        return extra

    def logs(self) -> dict[str, float]:
        info = self.info
        return {
            "env_success": float(bool(info.get("success", False))),
            "env_progress": float(info.get("progress", 0.0)),
            "env_turns": float(self.turns),
            "env_steps": float(info.get("steps", 0)),
            "env_context_cut": float(self.context_cut),
        }


class AgentExecutor(MultiTurnAgentExecutor):
    """OpenRLHF's ``MultiTurnAgentExecutor`` over :class:`AgentInstance`, plus the
    settlement of episodes it stops for a full context. Reads the settings when built
    (a bad ``GROUNDRL_ENV_*`` fails the rollout actor's start)."""

    def __init__(self) -> None:
        current_config()
        super().__init__(AgentInstance)

    async def execute(
        self, prompt, label, sampling_params, max_length: int, hf_tokenizer, llm_engine, images=None
    ):
        box: list[AgentInstance] = []
        token = _EPISODES.set(box)
        tok_token = _TOKENIZER.set(hf_tokenizer)
        try:
            out = await super().execute(
                prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=images
            )
        finally:
            _EPISODES.reset(token)
            _TOKENIZER.reset(tok_token)
        ep = box[-1] if box else None
        if ep is not None and ep.env is not None and not ep.done:
            out["reward"] = float(out["reward"]) + ep.settle()
            out["scores"] = ep.total
            out["extra_logs"] = ep.logs()
        return out


__all__ = [
    "AgentExecutor",
    "AgentInstance",
    "HouseholdAgentConfig",
    "current_config",
    "prompt_records",
    "task_from_label",
    "task_label",
    "write_prompt_dataset",
]

if __name__ != "groundrl.integrations.openrlhf_household":  # loaded by path (--train.agent_func_path)
    # Use the installed module's classes: one settings cache, one class identity.
    from groundrl.integrations import openrlhf_household as _installed

    AgentExecutor = _installed.AgentExecutor  # type: ignore[misc]  # noqa: F811
    AgentInstance = _installed.AgentInstance  # type: ignore[misc]  # noqa: F811
