"""Turn ``--judge-backend/--judge-model/--judge-url`` into a recipe's judge object.

The papers' judges are built on :mod:`groundrl.judges`; until a recipe has a judge,
asking for one is a clear error rather than a silent no-op.
"""

from __future__ import annotations

from typing import Any

import typer


def make_recipe_judge(recipe: str, backend: str, model: str | None, url: str | None) -> Any:
    try:
        from groundrl.judges.recipes import recipe_judge
    except ModuleNotFoundError as e:
        raise typer.BadParameter(
            f"model-based parts are not available in this install ({e}); score without --judge-backend",
            param_hint="--judge-backend",
        ) from e
    try:
        return recipe_judge(recipe, backend=backend, model=model, url=url)
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e), param_hint="--judge-backend") from e
