"""One recipe per paper. ``get_recipe(name)`` imports it on demand."""

from __future__ import annotations

from importlib import import_module

from groundrl.recipes.base import Recipe

RECIPE_NAMES = ("reinforced_planning", "embodied_brain", "eqa_rm", "proxy_grm", "argos")


def get_recipe(name: str) -> Recipe:
    if name not in RECIPE_NAMES:
        raise ValueError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPE_NAMES)}")
    return import_module(f"groundrl.recipes.{name}").RECIPE


__all__ = ["RECIPE_NAMES", "Recipe", "get_recipe"]
