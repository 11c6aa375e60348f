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
   ``groundrl score|serve|train``, the TRL, verl and OpenRLHF adapters, unchanged.

Every surface resolves names through :func:`get_recipe` and lists them with
:func:`recipe_names`; no other module keeps a list of recipe names.
"""

from __future__ import annotations

import logging
import threading
from importlib import import_module, metadata
from types import ModuleType
from typing import Any

from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option, OptionError
from groundrl.registry import admit, check_removable

log = logging.getLogger("groundrl.recipes")
ENTRY_POINT_GROUP = "groundrl.recipes"

# name -> module holding RECIPE (the built-ins)
_BUILTIN = {
    name: f"groundrl.recipes.{name}"
    for name in ("reinforced_planning", "embodied_brain", "eqa_rm", "proxy_grm", "argos")
}
_registered: dict[str, Recipe] = {}
_lock = threading.Lock()


class UnknownRecipeError(ValueError):
    """No recipe of that name is built in, registered or installed."""


def register(recipe: Recipe, *, replace: bool = False) -> Recipe:
    """Make ``recipe`` available by name on every surface; returns it. The rules of every
    registry (:mod:`groundrl.registry`): a built-in name raises, another recipe under a
    taken name raises unless ``replace=True``, the same recipe again is a no-op."""
    if not isinstance(recipe, Recipe):
        raise TypeError(f"register() takes a groundrl Recipe, got {type(recipe).__name__}")
    name = recipe.name
    with _lock:
        builtin = name in _BUILTIN
        current = import_module(_BUILTIN[name]).RECIPE if builtin else _registered.get(name)
        if admit("recipe", name, recipe, current, builtin=builtin, replace=replace):
            _registered[name] = recipe
    return recipe


def unregister(name: str) -> None:
    """Forget a recipe registered in this process (tests, notebooks); a built-in raises."""
    check_removable("recipe", name, builtin=name in _BUILTIN)
    with _lock:
        _registered.pop(name, None)


def _entry_points() -> dict[str, metadata.EntryPoint]:
    out: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _BUILTIN:
            log.warning("entry point %s (%s) ignored: %r is a built-in recipe", ep.name, ep.value, ep.name)
            continue
        out.setdefault(ep.name, ep)
    return out


def _from_entry_point(ep: metadata.EntryPoint) -> Recipe:
    try:
        obj: Any = ep.load()
    except Exception as e:
        raise UnknownRecipeError(
            f"recipe {ep.name!r}: its entry point {ep.value!r} failed to load ({type(e).__name__}: {e})"
        ) from e
    if isinstance(obj, ModuleType):
        obj = getattr(obj, "RECIPE", None)
    elif callable(obj) and not isinstance(obj, Recipe):
        obj = obj()
    if not isinstance(obj, Recipe):
        raise UnknownRecipeError(
            f"recipe {ep.name!r}: entry point {ep.value!r} gave {type(obj).__name__}, expected a groundrl Recipe"
        )
    if obj.name != ep.name:
        raise UnknownRecipeError(
            f"entry point {ep.name!r} ({ep.value}) gives a recipe named {obj.name!r}; the names must match"
        )
    return obj


def recipe_names() -> list[str]:
    """Every recipe name that :func:`get_recipe` accepts: built-ins first, then
    registered and installed ones, sorted."""
    extra = sorted(set(_registered) | set(_entry_points()))
    return [*_BUILTIN, *(n for n in extra if n not in _BUILTIN)]


def builtin_recipe_names() -> list[str]:
    """The five recipes groundrl ships (the papers'), in :func:`recipe_names`' order:
    what a check of *our* recipes iterates, so an installed plugin cannot make it fail."""
    return list(_BUILTIN)


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``; an unknown name raises :class:`UnknownRecipeError`
    listing the names there are."""
    if not isinstance(name, str):
        raise UnknownRecipeError(f"a recipe name is a string, got {type(name).__name__}")
    if name in _BUILTIN:
        return import_module(_BUILTIN[name]).RECIPE
    if name in _registered:
        return _registered[name]
    ep = _entry_points().get(name)
    if ep is None:
        raise UnknownRecipeError(f"unknown recipe {name!r}; choose one of {', '.join(recipe_names())}")
    recipe = _from_entry_point(ep)
    with _lock:
        _registered.setdefault(name, recipe)
    return _registered[name]


def __getattr__(name: str) -> Any:
    if name == "RECIPE_NAMES":  # kept for old imports; derived from the registry
        return tuple(recipe_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ENTRY_POINT_GROUP",
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
