"""Reinforced Reasoning's per-step trajectory decomposition: a gold trajectory of length
T becomes T samples — the goal and the previous actions as history, the step's
observation, the remaining actions as target."""

from __future__ import annotations

from typing import Any


def decompose(record: dict[str, Any]) -> list[dict[str, Any]]:
    """``{id, instruction, actions, observations?}`` → T records
    ``{id: "<id>/step<t>", instruction, history: actions[:t], observation, target: actions[t:]}``."""
    actions = list(record.get("actions") or [])
    obs = record.get("observations") or []
    if obs and len(obs) != len(actions):
        raise ValueError(f"record {record.get('id')!r}: {len(obs)} observations for {len(actions)} actions")
    return [
        {
            "id": f"{record.get('id')}/step{t}",
            "instruction": record.get("instruction", ""),
            "history": actions[:t],
            "observation": obs[t] if obs else None,
            "target": actions[t:],
        }
        for t in range(len(actions))
    ]
