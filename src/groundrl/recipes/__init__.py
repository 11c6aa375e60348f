"""The recipe registry: the one place that knows which recipes exist.

Three sources, looked up in this order:

1. the five built-in recipes (imported on first use, so ``--help`` stays fast);
2. recipes registered in this process with :func:`register`;
3. third-party packages that declare an entry point in the ``groundrl.recipes`` group,
   e.g. in their ``pyproject.toml``::

       [project.entry-points."groundrl.recipes"]
       my_recipe = "my_package.recipe:RECIPE"

   The entry point may name a :class:`Recipe`, a module with a ``RECIPE`` attribute, or
   a function returning a :class:`Recipe`. After ``pip install`` it works with
   ``groundrl score|serve|train``, the TRL, verl and OpenRLHF adapters, unchanged. A
   plugin that fails to load or names a recipe under another name is a warning naming
   it, and is skipped (the policy of every registry, :mod:`groundrl.registry`).

Every surface resolves names through :func:`get_recipe` and lists them with
:func:`recipe_names`; no other module keeps a list of recipe names.
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option, OptionError
from groundrl.registry import Registry

log = logging.getLogger("groundrl.recipes")
ENTRY_POINT_GROUP = "groundrl.recipes"


class UnknownRecipeError(ValueError):
    """No recipe of that name is built in, registered or installed."""


def _from_plugin(ep_name: str, obj: Any) -> Recipe:
    """What a ``groundrl.recipes`` entry point names → its Recipe (a Recipe, a module
    with ``RECIPE``, or a function returning one); a mismatch raises (the registry warns)."""
    if isinstance(obj, ModuleType):
        obj = getattr(obj, "RECIPE", None)
    elif callable(obj) and not isinstance(obj, Recipe):
        obj = obj()
    if not isinstance(obj, Recipe):
        raise TypeError(f"it gave {type(obj).__name__}, expected a groundrl Recipe")
    if obj.name != ep_name:
        raise ValueError(f"it gives a recipe named {obj.name!r}; the names must match")
    return obj


#: The recipe registry (:class:`groundrl.registry.Registry`); the functions below are
#: its long-standing names.
RECIPES: Registry[Recipe] = Registry(
    "recipe",
    group=ENTRY_POINT_GROUP,
    name_of=lambda r: r.name,
    from_plugin=_from_plugin,
    error=UnknownRecipeError,
    log=log,
)
for _name in ("reinforced_planning", "embodied_brain", "eqa_rm", "proxy_grm", "argos"):
    RECIPES.builtin_lazy(_name, f"groundrl.recipes.{_name}:RECIPE")  # imported on first use


def register(recipe: Recipe, *, replace: bool = False) -> Recipe:
    """Make ``recipe`` available by name on every surface; returns it. The rules of every
    registry (:mod:`groundrl.registry`): a built-in name raises, another recipe under a
    taken name raises unless ``replace=True``, the same recipe again is a no-op."""
    if not isinstance(recipe, Recipe):
        raise TypeError(f"register() takes a groundrl Recipe, got {type(recipe).__name__}")
    return RECIPES.register(recipe, replace=replace)


def unregister(name: str) -> None:
    """Forget a recipe registered in this process (tests, notebooks); a built-in raises."""
    RECIPES.unregister(name)


def recipe_names() -> list[str]:
    """Every recipe name that :func:`get_recipe` accepts: built-ins first, then
    registered and installed ones, sorted."""
    return RECIPES.names()


def builtin_recipe_names() -> list[str]:
    """The five recipes groundrl ships (the papers'), in :func:`recipe_names`' order:
    what a check of *our* recipes iterates, so an installed plugin cannot make it fail."""
    return RECIPES.builtin_names()


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``; an unknown name raises :class:`UnknownRecipeError`
    naming the closest and listing the names there are."""
    if not isinstance(name, str):
        raise UnknownRecipeError(f"a recipe name is a string, got {type(name).__name__}")
    return RECIPES.get(name)


def __getattr__(name: str) -> Any:
    if name == "RECIPE_NAMES":  # kept for old imports; derived from the registry
        return tuple(recipe_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ENTRY_POINT_GROUP",
    "RECIPES",
    "Option",
    "OptionError",
    "Recipe",
    "UnknownRecipeError",
    "builtin_recipe_names",
    "get_recipe",
    "recipe_names",
    "register",
    "unregister",
]
