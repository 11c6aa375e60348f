"""The settings and the reward of one multi-turn household episode, shared by every
engine that plays it (TRL's :class:`~groundrl.train.multiturn.EnvRollout`, the verl agent
loop, the OpenRLHF agent): the turn budget, the :class:`~groundrl.sim.env.HouseholdEnv`
reward and budgets, and the end-of-episode accounting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict


class HouseholdEnvKwargs(TypedDict):
    """:meth:`EpisodeOptions.env_kwargs`: keyword arguments of
    :class:`~groundrl.sim.env.HouseholdEnv`."""

    reward: str
    success_bonus: float
    invalid_penalty: float
    max_steps: int
    max_invalid: int
    vocab: str


@dataclass(frozen=True)
class EpisodeOptions:
    """The episode settings every multi-turn integration shares (verl's agent loop and
    OpenRLHF's agent file extend it with their own): the turn budget, the
    :class:`~groundrl.sim.env.HouseholdEnv` reward and budgets, and the turn penalty."""

    max_turns: int = 3
    reward: str = "plan"
    success_bonus: float = 1.0
    invalid_penalty: float = 0.0
    turn_penalty: float = 0.0
    max_steps: int = 30
    max_invalid: int = 10
    vocab: str = "auto"

    def env_kwargs(self) -> HouseholdEnvKwargs:
        """Keyword arguments of :class:`~groundrl.sim.env.HouseholdEnv`."""
        return {
            "reward": self.reward,
            "success_bonus": self.success_bonus,
            "invalid_penalty": self.invalid_penalty,
            "max_steps": self.max_steps,
            "max_invalid": self.max_invalid,
            "vocab": self.vocab,
        }


def episode_reward(
    env_reward: float,
    *,
    ended: bool,
    progress: float,
    turns: int,
    reward_kind: str | None,
    turn_penalty: float = 0.0,
) -> float:
    """An episode's reward from the sum of its environment rewards: an episode cut
    before the environment ended it (by ``max_turns``, or by a token budget) never got
    the ``"plan"`` reward's end-of-episode payout, so it gets its ``progress``, as
    :func:`groundrl.sim.reward.sim_reward` of the plan it ran would; then
    ``turn_penalty`` per turn after the first. Shared by
    :class:`~groundrl.train.multiturn.EnvRollout` and the verl agent loop
    (:mod:`groundrl.integrations.verl_agent_loop`).

    >>> episode_reward(0.0, ended=False, progress=0.5, turns=3, reward_kind="plan", turn_penalty=0.25)
    0.0
    >>> episode_reward(2.0, ended=True, progress=1.0, turns=2, reward_kind="plan")
    2.0
    """
    reward = float(env_reward)
    if not ended and reward_kind == "plan":
        reward += progress
    reward -= turn_penalty * max(0, turns - 1)
    return reward
