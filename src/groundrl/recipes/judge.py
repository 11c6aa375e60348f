"""A recipe's judge object from backend settings: each recipe declares its own
``judge_factory`` (a recipe builds its judge; no list of judged recipes is kept here)."""

from __future__ import annotations

from typing import Any

from groundrl.judges.config import JudgeConfig
from groundrl.recipes import get_recipe, recipe_names


def recipe_judge(recipe: str, backend: str, model: str | None, url: str | None = None, **options: Any) -> Any:
    """The judge object a recipe's ``judge=`` option expects. A recipe without
    model-based parts (``eqa_rm``, ``reinforced_planning``) raises ``ValueError``."""
    rec = get_recipe(recipe)
    if rec.judge_factory is None:
        judged = [n for n in recipe_names() if get_recipe(n).judge_factory is not None]
        raise ValueError(
            f"recipe {recipe} has no model-based parts; drop --judge-backend (judged recipes: {', '.join(judged)})"
        )
    cfg = JudgeConfig.from_mapping({"backend": backend, "model": model, "url": url, **options})
    return rec.judge_factory(cfg.make_backend(), cfg.sampling())
