"""What a recipe is: a named paper method that builds its rubric from options and
says which sample fields it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groundrl.rubric import Rubric


@dataclass(frozen=True)
class Recipe:
    """A paper's reward recipe.

    ``build(**options) -> Rubric`` makes the rubric; unknown options raise ``TypeError``
    naming the option. ``required`` are the sample fields every line must carry besides
    ``completion``; ``optional`` the ones read when present. ``label_field`` is the field
    that a trainer's single "label" / "ground_truth" maps to (verl, OpenRLHF).
    """

    name: str
    paper: str
    summary: str
    build: Callable[..., Rubric]
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    label_field: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def rubric(self, **options: Any) -> Rubric:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise TypeError(f"recipe {self.name!r} has no option {unknown[0]!r} (options: {known})")
        return self.build(**options)

    def missing_fields(self, sample: dict[str, Any]) -> list[str]:
        """Required fields (``completion`` included) absent from ``sample``."""
        return [f for f in ("completion", *self.required) if f not in sample or sample[f] is None]
