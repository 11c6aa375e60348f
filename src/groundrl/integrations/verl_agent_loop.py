"""verl (0.8 and 0.9) multi-turn agent loop with groundrl's household simulator in the rollout.

The paper leaves *online interaction* as future work: its rewards score a whole plan
offline against the simulator. This loop puts the simulator inside verl's rollout, so
GRPO/PPO train on episodes the policy played: it writes a plan, the household
environment runs it, and the environment's feedback comes back into the context for the
next plan — the same episode as TRL's :class:`groundrl.train.multiturn.EnvRollout`, on
verl's agent-loop machinery (``verl.experimental.agent_loop``).

Episode semantics (identical to ``EnvRollout``; the shared parts are imported from
:mod:`groundrl.sim.episode` and :mod:`groundrl.sim.episode_feedback`, not copied):

1. The row's task (``extra_info["task"]``, below) starts one
   :class:`~groundrl.sim.env.HouseholdEnv` episode; the row's chat ``prompt`` goes
   through verl's own prompt builder (``AgentLoopBase``: 0.8's ``apply_chat_template``,
   0.9's Continuous Token ``ct_build_initial_tokens``), as in verl's own loops.
2. Each turn the policy — ``server_manager.generate`` (vLLM / SGLang, token in, token
   out) — writes a plan; the tokens up to and including the first EOS are kept with
   ``response_mask`` 1; their text is one :meth:`HouseholdEnv.step`: the actions run
   until one fails or the episode ends.
3. If the episode goes on and turns remain, the environment's EB-ALFRED feedback,
   rendered by :func:`~groundrl.sim.episode_feedback.default_feedback_text`, is appended as
   token ids with ``response_mask`` 0 (not trained; logprob 0 when the server returns
   logprobs), and the policy re-plans from ``prompt + every earlier turn + feedback`` —
   up to ``max_turns`` turns. By default (``feedback_role: user``) the feedback is a user
   turn of the chat template (:func:`~groundrl.sim.episode_feedback.chat_feedback_text`: the
   close of the policy's turn, the user turn, the next assistant turn's generation
   prompt), so the context is exactly the chat template of the conversation so far.
   Nothing is decoded and re-tokenised between turns: the trained ids are the sampled ids.
4. ``reward_score`` is :func:`~groundrl.sim.episode.episode_reward` of the summed
   environment rewards: with the default ``reward: plan`` it is
   :func:`groundrl.sim.reward.sim_reward` of everything the agent ran
   (``progress + success_bonus·success``); an episode cut before the environment ended
   it gets its progress, and ``turn_penalty`` is taken per turn after the first.

verl puts ``reward_score`` at the last response token of ``rm_scores``
(``AgentLoopWorker._postprocess``) and, because ``rm_scores`` is then already in the
batch, trains on it without calling a reward function (``extract_reward``): no
``reward.custom_reward_function`` is needed, and the one configured is never called for
these rows.

Where it differs from ``EnvRollout`` (verl's constraints, not a change of semantics):

* verl gives every trajectory one token budget, ``rollout.response_length``
  (``data.max_response_length``), for all turns and feedback together. Each turn asks
  for at most the budget left (``max_tokens``; ``max_tokens_per_turn`` caps it
  further), and a turn's feedback that would leave no room for the next turn ends the
  episode instead (as verl's ``ToolAgentLoop`` does with tool responses). Such an
  episode is *cut*, like one cut by ``max_turns``, and is paid its progress under
  ``reward: plan``. ``EnvRollout`` has no global cap (``max_turns × max_new_tokens``).
* one trajectory per coroutine (``HouseholdEnv``), not a lockstep batch
  (``HouseholdVectorEnv``): verl runs its agent loops concurrently, one per sample.
* verl's rows are chat prompts, so the feedback is a user turn by default, as
  ``EnvRollout`` does for chat prompts; ``feedback_role: raw`` appends the text as is
  (``EnvRollout`` on text prompts), for a model trained without a chat template.
* ``num_turns`` follows verl's count (``__num_turns__``, logged as ``num_turns/*``):
  the prompt, every policy turn and every feedback message; ``env_turns`` is the
  number of policy turns (``EnvRollout``'s ``env_turns``).

**The task** is read from ``extra_info["task"]``: the task's JSON
(:meth:`~groundrl.sim.tasks.Task.to_json`) as a JSON *string* (a dict is accepted too).
``extra_info`` because verl's ``RLHFDataset`` hands it to the loop untouched, and
``reward_model.ground_truth`` belongs to reward functions (here it only names the task
id, for logs); a *string* because Parquet stores a dict column as one struct type for
all rows, which fills keys that other tasks' scenes lack with nulls, while a string
comes back byte for byte. :func:`household_rows` builds such rows.

**Registration.** verl finds an agent loop by the row's ``agent_name`` in its registry.
Name it in an agent-loop config (``actor_rollout_ref.rollout.agent.agent_loop_config_path``;
``AgentLoopWorker`` loads it and ``hydra.utils.instantiate``-s the ``_target_`` with the
other keys as options) — ``examples/verl/household_multiturn.yaml``::

    - name: groundrl_household
      _target_: groundrl.integrations.verl_agent_loop.HouseholdAgentLoop
      max_turns: 3
      reward: plan

The class is also decorated with verl's ``@register("groundrl_household")``, which
takes effect in any process that imports this module. The module imports without verl
(groundrl's main environment has none): the class is only defined when
``verl.experimental.agent_loop`` imports, and asking for it otherwise raises an
ImportError that says so; :func:`household_rows`, :func:`loop_options` and
:func:`check_agent_loop_config` need no verl.

**Options** (the config entry's other keys; a wrong one raises, naming the key, when
the loop is built — or before launching, with
``python -m groundrl.integrations.verl_agent_loop check CONFIG.yaml``):
``max_turns`` (3), ``reward`` (``plan`` | ``progress`` | ``sparse``), ``success_bonus``
(1.0), ``invalid_penalty`` (0.0), ``turn_penalty`` (0.0), ``max_steps`` (30),
``max_invalid`` (10), ``vocab`` (``auto`` or a vocabulary name),
``max_tokens_per_turn`` (null: the budget left), ``feedback_role`` (``user`` | ``raw``).

**Logged.** ``critic/score/*`` is the episode reward, ``num_turns/*`` verl's turn count,
``agent_loop/tool_calls/*`` the time spent in the simulator. Per sample, the
``reward_extra_info`` (validation: ``val-aux/<data_source>/<key>/mean@N``; rollout
dumps): ``env_success``, ``env_progress``, ``env_turns``, ``env_steps``, ``env_cut``
(1.0 when cut by ``max_turns`` or the token budget); ``turn_scores`` holds the
environment reward of each turn; ``env_end`` and ``env_feedback`` are in the rollout
dumps.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypedDict
from uuid import uuid4

from groundrl.io import load_yaml
from groundrl.sim.episode import EpisodeOptions, episode_reward
from groundrl.sim.episode_feedback import FEEDBACK_ROLES, chat_feedback_text, default_feedback_text
from groundrl.sim.episode_prompt import prompt as household_prompt
from groundrl.sim.generate import generate_tasks
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import vocab_names

logger = logging.getLogger("groundrl.integrations")

AGENT_NAME = "groundrl_household"
DATA_SOURCE = "groundrl/household"
TARGET = "groundrl.integrations.verl_agent_loop.HouseholdAgentLoop"
REWARD_KINDS = ("plan", "progress", "sparse")
#: The keyword arguments verl 0.8's ``AgentLoopWorker`` passes to every agent loop
#: (``name`` is the config entry's own key, passed on by ``hydra.utils.instantiate``).
VERL_KWARGS = frozenset(
    {
        "trainer_config",
        "server_manager",
        "tokenizer",
        "processor",
        "dataset_cls",
        "data_config",
        "tools",
        "name",
        "hf_model_type",  # verl 0.9: the model family for its token builder (passed on to the base)
    }
)
EXTRA_INFO_KEYS = ("env_success", "env_progress", "env_turns", "env_steps", "env_cut")

_WHERE = "the groundrl_household entry of actor_rollout_ref.rollout.agent.agent_loop_config_path"


@dataclass(frozen=True)
class LoopOptions(EpisodeOptions):
    """The household agent loop's options (the agent-loop config entry's keys): the
    shared episode settings plus verl's per-turn token cap and feedback role."""

    max_tokens_per_turn: int | None = None
    feedback_role: str = "user"


def _bad(key: str, why: str, value: Any) -> ValueError:
    return ValueError(f"groundrl_household agent loop: {key} {why}, got {value!r} — change {key} in {_WHERE}")


def _int(opts: Mapping[str, Any], key: str, default: int | None, lo: int, optional: bool = False) -> Any:
    v = opts.get(key, default)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise _bad(key, f"must be an integer ≥ {lo}" + (" or null" if optional else ""), v)
    return int(v)


def _float(opts: Mapping[str, Any], key: str, default: float) -> float:
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise _bad(key, "must be a finite number ≥ 0", v)
    return float(v)


def loop_options(options: Mapping[str, Any] | None = None) -> LoopOptions:
    """Validate the agent-loop options (the config entry's keys other than ``name`` and
    ``_target_``) and return them; a bad or unknown key raises ValueError naming it and
    where to change it.

    >>> loop_options({"max_turns": 2, "reward": "progress"}).max_turns
    2
    """
    opts = dict(options or {})
    known = {f.name for f in fields(LoopOptions)}
    unknown = sorted(set(opts) - known)
    if unknown:
        raise ValueError(
            f"groundrl_household agent loop: unknown option(s) {unknown} in {_WHERE}; "
            f"the options are {sorted(known)}"
        )
    reward = opts.get("reward", "plan")
    if reward not in REWARD_KINDS:
        raise _bad("reward", f"must be one of {list(REWARD_KINDS)}", reward)
    vocab = opts.get("vocab", "auto")
    if vocab != "auto" and vocab not in vocab_names():
        raise _bad("vocab", f"must be 'auto' or one of {list(vocab_names())}", vocab)
    role = opts.get("feedback_role", "user")
    if role not in FEEDBACK_ROLES:
        raise _bad(
            "feedback_role",
            "must be 'user' (a user turn of the chat template) or 'raw' (the feedback text as is)",
            role,
        )
    return LoopOptions(
        max_turns=_int(opts, "max_turns", 3, 1),
        reward=reward,
        success_bonus=_float(opts, "success_bonus", 1.0),
        invalid_penalty=_float(opts, "invalid_penalty", 0.0),
        turn_penalty=_float(opts, "turn_penalty", 0.0),
        max_steps=_int(opts, "max_steps", 30, 1),
        max_invalid=_int(opts, "max_invalid", 10, 1),
        vocab=vocab,
        max_tokens_per_turn=_int(opts, "max_tokens_per_turn", None, 1, optional=True),
        feedback_role=role,
    )


def check_agent_loop_config(path: str) -> dict[str, LoopOptions]:
    """Validate every groundrl household entry of an agent-loop config YAML (a list of
    ``{name, _target_, …options}``, verl's ``agent_loop_config_path`` format) without
    verl; returns ``{name: options}``. Raises ValueError on a malformed file or a bad
    option."""
    with open(path, encoding="utf-8") as f:
        entries = load_yaml(f.read())  # aliases bounded (issue 42); YamlTooLarge is a ValueError
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError(f"{path}: an agent-loop config is a YAML list of {{name, _target_, …}} entries")
    out = {}
    for e in entries:
        if "name" not in e or "_target_" not in e:
            raise ValueError(f"{path}: every entry needs name and _target_, got keys {sorted(e)}")
        if e["_target_"] == TARGET:
            out[e["name"]] = loop_options({k: v for k, v in e.items() if k not in ("name", "_target_")})
    if not out:
        raise ValueError(f"{path}: no entry has _target_: {TARGET}")
    return out


# -- the task and the dataset rows ---------------------------------------------------


def task_of_row(extra_info: Any) -> Task:
    """The household task of a dataset row, from ``extra_info["task"]`` (task JSON as a
    string, or as a dict)."""
    raw = extra_info.get("task") if isinstance(extra_info, Mapping) else None
    if raw is None:
        raise ValueError(
            "groundrl_household agent loop: the row has no extra_info['task'] (the task's JSON); "
            "build the dataset with groundrl.integrations.verl_agent_loop.household_rows"
        )
    if isinstance(raw, str | bytes):
        raw = json.loads(raw)
    return Task.from_json(dict(raw))


class _Turn(TypedDict):
    role: str
    content: str


class _RewardModel(TypedDict):
    style: str  # "env": the loop computes the reward
    ground_truth: str  # the task id, for logs


class _ExtraInfo(TypedDict):
    index: int
    split: str
    task_id: str
    task: str  # the task's JSON text, which the loop reads


class HouseholdRow(TypedDict):
    """One verl ``RLHFDataset`` row of :func:`household_rows`."""

    data_source: str
    agent_name: str
    prompt: list[_Turn]
    ability: str
    reward_model: _RewardModel
    extra_info: _ExtraInfo


def household_rows(
    tasks: Sequence[Task],
    *,
    split: str = "train",
    agent_name: str = AGENT_NAME,
    data_source: str = DATA_SOURCE,
    prompt_fn: Callable[[Task], str] | None = None,
    system_prompt: str | None = None,
) -> list[HouseholdRow]:
    """verl ``RLHFDataset`` rows (Parquet-ready dicts), one per task: ``data_source``,
    ``agent_name`` (the loop that plays the row), a chat ``prompt`` (``prompt_fn(task)``
    as the user message; default :func:`groundrl.sim.episode_prompt.prompt`, the demo
    planner's "Instruction … Scene … Plan:"), ``ability``, ``reward_model``
    (``ground_truth``: the task id — for logs; the loop computes the reward) and
    ``extra_info`` with ``index``, ``split``, ``task_id`` and ``task`` (the task's JSON
    as a string, which the loop reads)."""
    if prompt_fn is None:
        prompt_fn = household_prompt
    rows: list[HouseholdRow] = []
    for i, t in enumerate(tasks):
        messages: list[_Turn] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        messages.append({"role": "user", "content": prompt_fn(t)})
        rows.append(
            {
                "data_source": data_source,
                "agent_name": agent_name,
                "prompt": messages,
                "ability": "embodied_planning",
                "reward_model": {"style": "env", "ground_truth": t.id},
                "extra_info": {
                    "index": i,
                    "split": split,
                    "task_id": t.id,
                    "task": json.dumps(t.to_json(), sort_keys=True),
                },
            }
        )
    return rows


def write_rows(rows: Sequence[Mapping[str, Any]], path: str) -> int:
    """Write :func:`household_rows` to a Parquet file (pyarrow); returns the row count."""
    # lazy: pyarrow comes with the cluster stack (verl, datasets), not with groundrl
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([dict(r) for r in rows]), path)
    return len(rows)


# -- one episode, engine-agnostic ----------------------------------------------------


@dataclass
class EpisodeTrace:
    """One played episode: the response tokens and what the environment said."""

    response_ids: list[int] = field(default_factory=list)
    response_mask: list[int] = field(default_factory=list)
    logprobs: list[float] | None = field(default_factory=list)
    env_reward: float = 0.0  # the summed environment rewards
    reward: float = 0.0  # episode_reward of it: what the loop reports
    success: bool = False
    progress: float = 0.0
    turns: int = 0  # policy turns
    feedback_turns: int = 0  # feedback messages appended
    steps: int = 0
    ended: bool = False  # by the environment (success or a budget)
    cut: str = ""  # "" | "max_turns" | "response_length"
    end: str = ""  # the environment's end ("success", "step budget", …)
    turn_rewards: list[float] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    env_seconds: float = 0.0

    def extra_info(self) -> dict[str, float]:
        """The per-sample values verl logs (``reward_extra_info``)."""
        return {
            "env_success": float(self.success),
            "env_progress": float(self.progress),
            "env_turns": float(self.turns),
            "env_steps": float(self.steps),
            "env_cut": float(bool(self.cut)),
        }


#: ``generate(context_ids, max_tokens) -> (token_ids, log_probs or None)``
Generate = Callable[[list[int], int], Awaitable[tuple[list[int], list[float] | None]]]
#: ``encode_feedback(text, turn_ids) -> token ids`` of the feedback after a turn
EncodeFeedback = Callable[[str, list[int]], Awaitable[list[int]]]


async def play_episode(
    task: Task,
    prompt_ids: Sequence[int],
    *,
    generate: Generate,
    decode: Callable[[list[int]], str],
    encode_feedback: EncodeFeedback,
    eos_token_id: int | None,
    response_length: int,
    options: LoopOptions,
) -> EpisodeTrace:
    """Play one household episode (the module docstring's semantics) with ``generate``
    as the policy; ``response_length`` caps the response (every turn and feedback)."""
    # lazy: gymnasium (the optional sim extra) loads only when an episode runs
    from groundrl.sim.env import HouseholdEnv

    if response_length < 1:
        raise ValueError(f"response_length must be ≥ 1, got {response_length}")
    env = HouseholdEnv([task], **options.env_kwargs())
    env.reset(options={"task": task})
    loop = asyncio.get_running_loop()
    ep = EpisodeTrace()
    prompt_ids = list(prompt_ids)
    for turn in range(options.max_turns):
        budget = response_length - len(ep.response_ids)
        if budget < 1:
            ep.cut = "response_length"
            break
        ask = min(budget, options.max_tokens_per_turn or budget)
        ids, logprobs = await generate(prompt_ids + ep.response_ids, ask)
        ids = list(ids)[:ask]
        if eos_token_id is not None and eos_token_id in ids:
            ids = ids[: ids.index(eos_token_id) + 1]
        if ep.logprobs is not None and logprobs is not None and len(logprobs) >= len(ids):
            ep.logprobs += [float(x) for x in logprobs[: len(ids)]]
        else:
            ep.logprobs = None
        ep.response_ids += ids
        ep.response_mask += [1] * len(ids)
        ep.turns += 1
        text = decode(ids)
        ep.texts.append(text)
        t0 = time.perf_counter()
        obs, r, term, trunc, info = await loop.run_in_executor(None, env.step, text)
        ep.env_seconds += time.perf_counter() - t0
        ep.env_reward += float(r)
        ep.turn_rewards.append(float(r))
        ep.feedback += list(info["feedback"] or [])
        ep.steps, ep.progress = int(info["steps"]), float(info["progress"])
        ep.success, ep.end = bool(info["success"]), str(info["end"])
        if term or trunc:
            ep.ended = True
            break
        if turn + 1 == options.max_turns:
            ep.cut = "max_turns"
            break
        fb = list(await encode_feedback(default_feedback_text(info, obs), ids))
        if len(ep.response_ids) + len(fb) >= response_length:  # no room left for a next turn
            ep.cut = "response_length"
            break
        ep.response_ids += fb
        ep.response_mask += [0] * len(fb)
        if ep.logprobs is not None:
            ep.logprobs += [0.0] * len(fb)
        ep.feedback_turns += 1
    ep.reward = episode_reward(
        ep.env_reward,
        ended=ep.ended,
        progress=ep.progress,
        turns=ep.turns,
        reward_kind=options.reward,
        turn_penalty=options.turn_penalty,
    )
    return ep


# -- the verl agent loop -------------------------------------------------------------

try:
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
    from verl.utils.rollout_trace import rollout_trace_op
except ImportError as _e:  # groundrl's main environment: no verl
    _VERL_IMPORT_ERROR: ImportError | None = _e
else:
    _VERL_IMPORT_ERROR = None

    @register(AGENT_NAME)
    class HouseholdAgentLoop(AgentLoopBase):
        """verl agent loop ``groundrl_household``: one household episode per sample (see
        the module docstring). Built by verl's ``AgentLoopWorker`` with
        ``hydra.utils.instantiate``; the config entry's other keys are the
        :class:`LoopOptions`."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            options = {k: kwargs.pop(k) for k in list(kwargs) if k not in VERL_KWARGS}
            self.options = loop_options(options)
            kwargs.pop("tools", None)
            kwargs.pop("name", None)
            super().__init__(*args, **kwargs)
            self.prompt_length = self.rollout_config.prompt_length
            self.response_length = self.rollout_config.response_length

        async def _prompt_ids(
            self, messages: list, images: Any, videos: Any, audios: Any, mm_kwargs: Any
        ) -> list[int]:
            """The row's chat prompt as token ids, the way this verl builds them: 0.9 made
            its Continuous Token builder the only path (``ct_build_initial_tokens``; a
            multimodal row needs a VL builder and a processor, checked first, as its own
            loops do); 0.8 has ``apply_chat_template``."""
            if hasattr(self, "ct_build_initial_tokens"):
                self._assert_mm_supported(bool(images or videos or audios))
                ids = await self.ct_build_initial_tokens(
                    messages, images=images, videos=videos, audios=audios
                )
            else:
                ids = await self.apply_chat_template(
                    messages, images=images, videos=videos, audios=audios, mm_processor_kwargs=mm_kwargs
                )
            return list(ids)

        async def _encode_feedback(self, text: str, turn_ids: list[int]) -> list[int]:
            """The feedback after a turn as token ids: as a user chat turn when
            ``feedback_role`` is ``user``, else the text as is."""
            if self.options.feedback_role == "user":
                ended = bool(turn_ids) and turn_ids[-1] == self.tokenizer.eos_token_id
                # the tokenizer's template (text-only turns); a processor's when it has none
                tmpl = self.tokenizer if getattr(self.tokenizer, "chat_template", None) else self.processor
                text = chat_feedback_text(tmpl or self.tokenizer, text, turn_ended=ended)
            return await self.loop.run_in_executor(
                None, lambda: self.tokenizer.encode(text, add_special_tokens=False)
            )

        @rollout_trace_op
        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
            task = task_of_row(kwargs.get("extra_info"))
            messages = list(kwargs["raw_prompt"])
            mm = await self.process_multi_modal_info(messages)
            images, videos, audios = mm.get("images"), mm.get("videos"), mm.get("audios")
            mm_kwargs = self._get_mm_processor_kwargs(audios)
            prompt_ids = await self._prompt_ids(messages, images, videos, audios, mm_kwargs)
            request_id = uuid4().hex
            metrics: dict[str, float] = {"generate_sequences": 0.0, "num_preempted": -1}
            extra: dict[str, object] = {}  # verl's extra_fields, then the episode's
            last: dict[str, Any] = {}

            async def generate(context: list[int], max_tokens: int):
                t0 = time.perf_counter()
                out = await self.server_manager.generate(
                    request_id=request_id,
                    prompt_ids=context,
                    sampling_params={**sampling_params, "max_tokens": max_tokens},
                    image_data=images,
                    video_data=videos,
                    audio_data=audios,
                    mm_processor_kwargs=mm_kwargs,
                )
                metrics["generate_sequences"] += time.perf_counter() - t0
                if out.num_preempted is not None:
                    metrics["num_preempted"] = max(0, metrics["num_preempted"]) + out.num_preempted
                if not extra:
                    extra.update(out.extra_fields or {})
                elif (out.extra_fields or {}).get("max_global_steps"):
                    extra["max_global_steps"] = out.extra_fields["max_global_steps"]
                last["routed_experts"] = out.routed_experts
                return list(out.token_ids), out.log_probs

            ep = await play_episode(
                task,
                prompt_ids,
                generate=generate,
                decode=lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True),
                encode_feedback=self._encode_feedback,
                eos_token_id=self.tokenizer.eos_token_id,
                response_length=self.response_length,
                options=self.options,
            )
            metrics["tool_calls"] = ep.env_seconds
            routed = last.get("routed_experts")
            if routed is not None:
                routed = routed[: len(prompt_ids) + len(ep.response_ids)]
            extra.update(
                {
                    "turn_scores": ep.turn_rewards,
                    "tool_rewards": [],
                    "env_end": ep.end or ep.cut,
                    "env_feedback": ep.feedback,
                    "task_id": task.id,
                    "reward_extra_info": ep.extra_info(),
                }
            )
            return AgentLoopOutput(
                prompt_ids=prompt_ids,
                response_ids=ep.response_ids,
                response_mask=ep.response_mask,
                response_logprobs=ep.logprobs if ep.logprobs else None,
                routed_experts=routed,
                multi_modal_data=mm,
                mm_processor_kwargs=mm_kwargs,
                reward_score=ep.reward,
                num_turns=1 + ep.turns + ep.feedback_turns,
                metrics=metrics,
                extra_fields=extra,
            )


def __getattr__(name: str) -> Any:
    if name == "HouseholdAgentLoop" and _VERL_IMPORT_ERROR is not None:
        raise ImportError(
            "HouseholdAgentLoop needs verl 0.8 (verl.experimental.agent_loop), which did not import: "
            f"{_VERL_IMPORT_ERROR}. Install verl in the training environment (`make cluster-env` builds one)."
        ) from _VERL_IMPORT_ERROR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m groundrl.integrations.verl_agent_loop check CONFIG.yaml`` validates an
    agent-loop config; ``… rows OUT.parquet [--n N] [--seed S] [--split SPLIT]`` writes
    household rows of ``generate_tasks(N, seed=S)``."""
    p = argparse.ArgumentParser(prog="python -m groundrl.integrations.verl_agent_loop")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="validate an agent-loop config YAML")
    c.add_argument("config")
    r = sub.add_parser("rows", help="write household task rows as verl Parquet")
    r.add_argument("out")
    r.add_argument("--n", type=int, default=256)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--split", default="train")
    a = p.parse_args(argv)
    if a.cmd == "check":
        for name, opts in check_agent_loop_config(a.config).items():
            print(f"{name}: {opts}")
        return 0

    n = write_rows(household_rows(generate_tasks(a.n, seed=a.seed), split=a.split), a.out)
    print(f"wrote {n} rows to {a.out}")
    return 0


__all__ = [
    "AGENT_NAME",
    "EpisodeTrace",
    "LoopOptions",
    "check_agent_loop_config",
    "household_rows",
    "loop_options",
    "play_episode",
    "task_of_row",
    "write_rows",
]

if __name__ == "__main__":
    raise SystemExit(main())
