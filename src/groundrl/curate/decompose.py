"""Reinforced Reasoning's per-step trajectory decomposition.

A gold trajectory of T actions becomes T samples; sample t (0 ≤ t < T) gives the goal and
the actions already taken as history, the observation at step t, and asks for the
remaining actions: ``history = actions[:t]``, ``target = actions[t:]``. Training and
``groundrl curate decompose`` both use :func:`decompose`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict


class StepSample(TypedDict):
    """One step of a decomposed trajectory (see :func:`decompose`)."""

    id: str
    instruction: object  # passed through as given ("" when absent)
    history: list[object]
    observation: object  # an image reference or text, passed through
    target: list[object]


def decompose(record: Mapping[str, Any]) -> list[StepSample]:
    """``{id, instruction, actions: [...], observations?: [...]}`` → T records
    ``{id: f"{id}/step{t}", instruction, history: actions[:t], observation, target: actions[t:]}``.

    ``observation`` is ``observations[t]`` (an image reference or text, passed through
    as is), or ``None`` when the record has no (or an empty list of) observations. ``observations`` holds one
    observation per step; a trajectory that also recorded the state after its last action
    (T + 1 observations) is accepted and that terminal observation is not used (no
    sample starts there). A missing ``instruction`` becomes ``""``; T = 0 gives ``[]``.

    Raises ``ValueError`` for a record that cannot be decomposed: not a mapping,
    ``actions`` not a list, or ``observations`` not a list of T or T + 1 entries.
    """
    if not isinstance(record, dict):
        raise ValueError(f"a trajectory must be a mapping, got {type(record).__name__}")
    rid = record.get("id")
    actions = record.get("actions")
    if actions is None:
        actions = []
    if not isinstance(actions, (list, tuple)):
        raise ValueError(f"record {rid!r}: `actions` must be a list, got {type(actions).__name__}")
    obs = record.get("observations")
    if isinstance(obs, (list, tuple)) and not obs:
        obs = None  # an empty list records no observations
    t_max = len(actions)
    if obs is not None and (not isinstance(obs, (list, tuple)) or len(obs) not in (t_max, t_max + 1)):
        n = len(obs) if isinstance(obs, (list, tuple)) else type(obs).__name__
        raise ValueError(
            f"record {rid!r}: `observations` must be a list with one entry per action "
            f"({t_max}, or {t_max + 1} with the final state), got {n}"
        )
    instruction = record.get("instruction")
    return [
        {
            "id": f"{rid}/step{t}",
            "instruction": "" if instruction is None else instruction,
            "history": list(actions[:t]),
            "observation": obs[t] if obs is not None else None,
            "target": list(actions[t:]),
        }
        for t in range(t_max)
    ]
