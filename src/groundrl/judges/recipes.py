"""Judges for the recipes' model-based parts, from the CLI's judge options."""

from __future__ import annotations

from typing import Any

from groundrl.judges.factory import make_backend
from groundrl.judges.papers import ArgosTeachers, PlanningGRM, ProxyAgent

# recipe → (judge class, part name it adds)
RECIPE_JUDGES = {"embodied_brain": PlanningGRM, "proxy_grm": ProxyAgent, "argos": ArgosTeachers}


def recipe_judge(recipe: str, backend: str, model: str | None, url: str | None = None, **options: Any) -> Any:
    """The judge object a recipe's ``judge=`` option expects. ``eqa_rm`` and
    ``reinforced_planning`` have no model-based parts: asking for one is an error."""
    if recipe not in RECIPE_JUDGES:
        raise ValueError(
            f"recipe {recipe} has no model-based parts; drop --judge-backend (judged recipes: {', '.join(RECIPE_JUDGES)})"
        )
    return RECIPE_JUDGES[recipe](make_backend(backend, model, url, **options))
