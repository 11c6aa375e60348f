"""The high-level skills every action vocabulary is translated into."""

from __future__ import annotations

from dataclasses import dataclass

VERBS = (
    "find",
    "pickup",
    "put",
    "open",
    "close",
    "toggle_on",
    "toggle_off",
    "slice",
    "clean",
    "heat",
    "cool",
)


@dataclass(frozen=True, slots=True)
class Skill:
    """``verb`` from :data:`VERBS`; ``target`` an instance id (``Apple_1``), an object
    type (``Apple``), or ``None`` where the verb allows it (``put`` → the most recently
    found receptacle; ``clean``/``heat``/``cool`` → the object in hand)."""

    verb: str
    target: str | None = None

    def __str__(self) -> str:
        return f"{self.verb}({self.target or ''})"
