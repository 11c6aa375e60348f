"""Multi-turn GRPO with the household environment in the loop, on TRL's ``GRPOTrainer``.

TRL 1.16 offers two ways to put an environment inside a GRPO rollout:
``environment_factory`` (the environment's public methods become *tools* the model
calls through its chat template's tool-call syntax) and ``rollout_func`` (the trainer
hands the prompts to a function that returns token ids). groundrl uses
``rollout_func``: an EB-ALFRED policy answers with a *plan* (text in any of the five
vocabularies), not with tool-call JSON, and a small planner trained from scratch (the
demo's) has no tool-calling chat template. :class:`EnvRollout` is that function:

1. every prompt of the batch starts one episode of
   :class:`~groundrl.sim.env.HouseholdVectorEnv` on the prompt's task (``task_of``);
2. the policy (the trainer's model, sampling with the trainer's temperature / top-p /
   top-k) writes a plan; :meth:`HouseholdEnv.step` runs it until an action fails or the
   episode ends;
3. if the episode goes on, the environment's EB-ALFRED feedback is rendered by
   ``feedback_text`` and appended to the context *as token ids*, and the policy
   re-plans from there — up to ``max_turns`` turns;
4. the episode's token ids go back to the trainer as one completion: the policy's
   tokens of every turn with ``env_mask`` 1, the feedback tokens with ``env_mask`` 0
   (TRL multiplies it into the loss mask, so only the policy's tokens are trained), and
   the episode's outcome as extra fields (``env_reward``, ``env_success``,
   ``env_progress``, ``env_turns``, ``env_steps``, ``env_feedback``) which TRL passes to
   the reward functions.

:func:`env_reward_funcs` returns the reward functions (and weights) that read those
fields: ``env_reward`` (weight 1: the episode's summed environment reward — with the
default ``reward="plan"`` exactly :func:`groundrl.sim.reward.sim_reward` of everything
the agent ran, ``progress + success_bonus·success``) and ``env_success`` (weight 0: a
logged metric). The trainer's logged ``reward`` is therefore the environment's reward,
and GRPO's group advantages are computed from it.

The forward pass the loss uses sees exactly the context the policy was sampled from
(prompt ids + every earlier turn's ids + feedback ids), because nothing is decoded and
re-tokenised between turns. ``logprobs`` is returned as ``None`` (they are only needed
for vLLM's importance-sampling correction; this generator is the training model itself).

Cluster engines: verl's multi-turn agent loop and OpenRLHF's agent executor are not
here — they belong with the verl / OpenRLHF adapters in ``groundrl.integrations``
(:mod:`groundrl.integrations.verl_agent_loop`,
:mod:`groundrl.integrations.openrlhf_household`). The episode pieces they share with this
module live in the simulator, below both: :class:`~groundrl.sim.episode.EpisodeOptions`
and :func:`~groundrl.sim.episode.episode_reward` (:mod:`groundrl.sim.episode`), the
feedback text (:mod:`groundrl.sim.episode_feedback`), the prompt builder
(:mod:`groundrl.sim.episode_prompt`) and :class:`~groundrl.sim.env.HouseholdEnv`
(``reset(options={"task": …})``, ``step(text)``, ``info["feedback"]``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from groundrl.sim.episode import episode_reward
from groundrl.sim.episode_feedback import FEEDBACK_ROLES, FeedbackText, default_feedback_text, feedback_ids
from groundrl.sim.tasks import Task

logger = logging.getLogger("groundrl.train")


# TRL's reward-function contract: one value per completion, None where it does not apply
TrlRewardFunc = Callable[..., list[float | None]]


def env_reward(completions: list[Any], env_reward: list[float], **kwargs: Any) -> list[float | None]:
    """The episode's summed environment reward (an extra field of :class:`EnvRollout`)."""
    return [float(r) for r in env_reward]


def env_success(completions: list[Any], env_success: list[float], **kwargs: Any) -> list[float | None]:
    """1.0 when the episode ended in success (a weight-0 metric)."""
    return [float(s) for s in env_success]


def env_reward_funcs() -> tuple[list[TrlRewardFunc], list[float]]:
    """``(reward_funcs, reward_weights)`` for ``GRPOTrainer`` with :class:`EnvRollout`."""
    return [env_reward, env_success], [1.0, 0.0]


@dataclass
class Episode:
    """One rollout: its token ids and what the environment said."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    reward: float = 0.0
    success: bool = False
    progress: float = 0.0
    turns: int = 0
    steps: int = 0
    ended: bool = False  # by the environment (success or a budget), not by max_turns
    feedback: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # the policy's text per turn


class _Sampling(TypedDict):
    """The policy's sampling settings, from the trainer's GRPO arguments."""

    do_sample: bool
    temperature: float
    top_p: float
    top_k: int


class EnvRollout:
    """A TRL ``rollout_func`` that plays each prompt as a multi-turn household episode.

    ``task_of``: the prompt's task — a mapping from prompt text to
    :class:`~groundrl.sim.tasks.Task` (or task JSON), or a callable ``prompt -> Task``.
    ``max_turns``: policy turns per episode (1 = one plan, no re-planning).
    ``max_new_tokens``: tokens per turn (default: the trainer's
    ``max_completion_length``); the whole completion — every turn *and* every feedback —
    is capped at ``max_turns`` times that: a turn asks for at most what is left, and
    feedback that would leave no room for another turn ends the episode instead (cut,
    paid its progress under ``reward="plan"``, as by ``max_turns``).
    ``feedback_text(info, obs) -> str``: the feedback between turns
    (:func:`~groundrl.sim.episode_feedback.default_feedback_text`). ``feedback_role``:
    ``"user"`` puts it in a user turn of the tokenizer's chat template
    (:func:`~groundrl.sim.episode_feedback.chat_feedback_text`), ``"raw"`` appends the
    text as is; ``"auto"`` (default) is ``"user"`` for chat prompts (message lists) and
    ``"raw"`` for text prompts, whose context is no chat template. ``env_kwargs`` go to
    :class:`~groundrl.sim.env.HouseholdEnv` (``reward``, ``success_bonus``,
    ``invalid_penalty``, ``max_steps``, ``max_invalid``, ``vocab``); the default reward
    is ``"plan"``. ``turn_penalty`` is subtracted from the episode reward per turn after
    the first (0 by default: re-planning is free). ``generate_fn(model, tokenizer,
    contexts, max_new_tokens, trainer)`` replaces the sampler (tests use it to script a
    policy; default :meth:`sample`).

    Call it as ``rollout(prompts, trainer)`` (TRL does); :attr:`episodes` keeps the
    last batch's :class:`Episode` records and :attr:`history` a per-call summary.
    """

    def __init__(
        self,
        task_of: Mapping[str, Task | Mapping[str, Any]] | Callable[[str], Task],
        *,
        max_turns: int = 3,
        max_new_tokens: int | None = None,
        feedback_text: FeedbackText = default_feedback_text,
        turn_penalty: float = 0.0,
        generate_fn: Callable[..., list[list[int]]] | None = None,
        feedback_role: str = "auto",
        **env_kwargs: Any,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be ≥ 1, got {max_turns}")
        if feedback_role not in ("auto", *FEEDBACK_ROLES):
            raise ValueError(f"feedback_role must be 'auto', 'user' or 'raw', got {feedback_role!r}")
        self.feedback_role = feedback_role
        if turn_penalty < 0:
            raise ValueError(f"turn_penalty must be ≥ 0, got {turn_penalty}")
        self.task_of = task_of
        self.max_turns, self.max_new_tokens = max_turns, max_new_tokens
        self.feedback_text, self.turn_penalty = feedback_text, float(turn_penalty)
        self.generate_fn = generate_fn or self.sample
        env_kwargs.setdefault("reward", "plan")
        self.env_kwargs = env_kwargs
        self.episodes: list[Episode] = []
        self.history: list[dict[str, float]] = []

    # -- the TRL interface ------------------------------------------------------------

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = getattr(trainer, "processing_class", None)
        tokenizer = getattr(tokenizer, "tokenizer", tokenizer)
        model = (
            trainer.accelerator.unwrap_model(trainer.model)
            if hasattr(trainer, "accelerator")
            else trainer.model
        )
        limit = self.max_new_tokens or getattr(trainer.args, "max_completion_length", None) or 256
        episodes = self.play(model, tokenizer, list(prompts), limit, trainer)
        self.episodes = episodes
        n = max(1, len(episodes))
        self.history.append(
            {
                "reward": sum(e.reward for e in episodes) / n,
                "success": sum(e.success for e in episodes) / n,
                "turns": sum(e.turns for e in episodes) / n,
            }
        )
        return {
            "prompt_ids": [e.prompt_ids for e in episodes],
            "completion_ids": [e.completion_ids for e in episodes],
            "logprobs": None,
            "env_mask": [e.env_mask for e in episodes],
            "env_reward": [e.reward for e in episodes],
            "env_success": [float(e.success) for e in episodes],
            "env_progress": [e.progress for e in episodes],
            "env_turns": [e.turns for e in episodes],
            "env_steps": [e.steps for e in episodes],
            "env_feedback": ["\n".join(e.feedback) for e in episodes],
        }

    # -- the episode loop -----------------------------------------------------------

    def task(self, prompt: Any) -> Task:
        key = prompt if isinstance(prompt, str) else _prompt_key(prompt)
        t: Task | Mapping[str, Any]
        if callable(self.task_of) and not isinstance(self.task_of, Mapping):
            t = self.task_of(key)
        else:
            if key not in self.task_of:
                raise KeyError(f"no task for prompt {key[:80]!r}: task_of must cover every training prompt")
            t = self.task_of[key]
        return t if isinstance(t, Task) else Task.from_json(t)

    def play(
        self, model: Any, tokenizer: Any, prompts: list[Any], max_new_tokens: int, trainer: Any = None
    ) -> list[Episode]:
        """Play one episode per prompt (in lockstep) and return them."""
        # lazy: gymnasium (the optional sim extra) loads only when an episode runs
        from groundrl.sim.env import HouseholdVectorEnv

        tasks = [self.task(p) for p in prompts]
        venv = HouseholdVectorEnv(len(prompts), tasks, **self.env_kwargs)
        venv.reset(options={"tasks": tasks})
        episodes = [Episode(_encode_prompt(tokenizer, p)) for p in prompts]
        roles = [self._role(p) for p in prompts]
        eos = tokenizer.eos_token_id
        cap = self.max_turns * max_new_tokens  # the whole completion, feedback included
        active = list(range(len(prompts)))
        for turn in range(self.max_turns):
            if not active:
                break
            contexts = [episodes[i].prompt_ids + episodes[i].completion_ids for i in active]
            asks = [min(max_new_tokens, cap - len(episodes[i].completion_ids)) for i in active]
            outs = self.generate_fn(model, tokenizer, contexts, max(asks), trainer)
            texts = []
            for i, ids, ask in zip(active, outs, asks, strict=True):
                ids = list(ids)[:ask]
                if eos in ids:
                    ids = ids[: ids.index(eos) + 1]
                ep = episodes[i]
                ep.completion_ids += ids
                ep.env_mask += [1] * len(ids)
                ep.turns += 1
                text = tokenizer.decode(ids, skip_special_tokens=True)
                ep.texts.append(text)
                texts.append(text)
            actions = [""] * len(prompts)
            for i, text in zip(active, texts, strict=True):
                actions[i] = text
            obs, rewards, term, trunc, info = venv.step(actions)
            still = []
            for i in active:
                ep = episodes[i]
                ep.reward += float(rewards[i])
                ep.feedback += list(info["feedback"][i] or [])
                ep.steps = int(info["steps"][i])
                ep.progress = float(info["progress"][i])
                ep.success = bool(info["success"][i])
                if term[i] or trunc[i]:
                    ep.ended = True
                    continue
                if turn + 1 < self.max_turns:
                    one_info = {k: v[i] for k, v in info.items() if isinstance(v, list)}
                    one_obs = {k: v[i] for k, v in obs.items()}
                    last = ep.completion_ids[-1:]
                    fb = feedback_ids(tokenizer, one_info, one_obs, roles[i], last, self.feedback_text)
                    if len(ep.completion_ids) + len(fb) >= cap:  # no room left for another turn
                        continue
                    ep.completion_ids += fb
                    ep.env_mask += [0] * len(fb)
                    still.append(i)
            active = still
        for ep in episodes:
            ep.reward = episode_reward(
                ep.reward,
                ended=ep.ended,
                progress=ep.progress,
                turns=ep.turns,
                reward_kind=self.env_kwargs.get("reward"),
                turn_penalty=self.turn_penalty,
            )
        return episodes

    def _role(self, prompt: Any) -> str:
        if self.feedback_role != "auto":
            return self.feedback_role
        return "raw" if isinstance(prompt, str) else "user"

    @staticmethod
    def sample(
        model: Any, tokenizer: Any, contexts: list[list[int]], max_new_tokens: int, trainer: Any = None
    ):
        """Sample one continuation per context (left-padded batch) with the trainer's
        sampling settings; returns the new token ids up to and including the first EOS
        (:func:`cut_at_eos`)."""
        # lazy: torch loads only when the rollout generates
        import torch

        args = getattr(trainer, "args", None)
        pad = tokenizer.pad_token_id
        width = max(len(c) for c in contexts)
        ids = torch.full((len(contexts), width), pad, dtype=torch.long)
        attn = torch.zeros((len(contexts), width), dtype=torch.long)
        for r, c in enumerate(contexts):
            ids[r, width - len(c) :] = torch.tensor(c, dtype=torch.long)
            attn[r, width - len(c) :] = 1
        kwargs: _Sampling = {
            "do_sample": True,
            "temperature": float(getattr(args, "temperature", 1.0) or 1.0),
            "top_p": float(getattr(args, "top_p", 1.0) or 1.0),
            "top_k": int(getattr(args, "top_k", 0) or 0),
        }
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                out = model.generate(
                    input_ids=ids.to(model.device),
                    attention_mask=attn.to(model.device),
                    max_new_tokens=max_new_tokens,
                    pad_token_id=pad,
                    eos_token_id=tokenizer.eos_token_id,
                    **kwargs,
                )
        finally:
            model.train(was_training)
        return cut_at_eos(out[:, width:].tolist(), tokenizer.eos_token_id)


def cut_at_eos(rows: list[list[int]], eos: int | None) -> list[list[int]]:
    """Each generated row up to and including its first ``eos``; what follows is the
    batch's padding. Cutting (not dropping pad ids) keeps the sampled EOS when pad == eos
    (``<|im_end|>`` in many instruct models), so the policy is trained to stop.

    >>> cut_at_eos([[5, 2, 2, 2], [5, 6, 7, 8]], eos=2)
    [[5, 2], [5, 6, 7, 8]]
    """
    return [row[: row.index(eos) + 1] if eos is not None and eos in row else row for row in rows]


def _prompt_key(prompt: Any) -> str:
    """A chat prompt's key: the content of its last user message."""
    for m in reversed(prompt):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if isinstance(p, dict))
    raise ValueError("a chat prompt needs a user message")


def _encode_prompt(tokenizer: Any, prompt: Any) -> list[int]:
    if isinstance(prompt, str):
        return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    ids = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return list(ids)


__all__ = [
    "Episode",
    "EnvRollout",
    "cut_at_eos",
    "env_reward",
    "env_reward_funcs",
    "env_success",
]
