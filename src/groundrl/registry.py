"""The rules every groundrl registry shares, so recipes, stage kinds, vocabularies, task
types and judge backends behave alike (each registry keeps its own table; ``admit`` and
``check_removable`` decide what may go in and out, with one wording for the errors, and
``load_entry_points`` reads a registry's plugin group the same way for all):

- a built-in can never be replaced nor removed;
- registering another object under a taken name raises unless ``replace=True``;
- registering the same object again is a no-op.

>>> admit("recipe", "x", obj := object(), None, builtin=False, replace=False)
True
>>> admit("recipe", "x", obj, obj, builtin=False, replace=False)
False
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import entry_points


def admit(kind: str, name: str, obj: object, current: object | None, *, builtin: bool, replace: bool) -> bool:
    """Whether ``obj`` should be stored under ``name``, where ``current`` is what the
    registry holds there now (``None``: free) and ``builtin`` says whether that is a
    built-in. ``False`` means ``obj`` is already there (nothing to do); a refused
    registration raises ``ValueError`` naming what to change."""
    if current is obj:
        return False
    if builtin and current is not None:
        raise ValueError(f"{name!r} is a built-in {kind}; give yours another name")
    if current is not None and not replace:
        raise ValueError(
            f"a {kind} named {name!r} is already registered; pass replace=True to swap it for yours"
        )
    return True


def check_removable(kind: str, name: str, *, builtin: bool) -> None:
    """Raise ``ValueError`` when ``name`` is a built-in (it cannot be unregistered)."""
    if builtin:
        raise ValueError(f"{name!r} is a built-in {kind}; it cannot be unregistered")


def load_entry_points(
    group: str, kind: str, accept: Callable[[str, object], object], log: logging.Logger
) -> None:
    """Load every entry point of ``group`` and pass ``(name, loaded object)`` to ``accept``
    (which registers what it recognises). A plugin that fails to import or to register is
    logged as a warning naming it and skipped: a broken plugin never breaks the built-ins."""
    for ep in entry_points(group=group):
        try:
            accept(ep.name, ep.load())
        except Exception as e:
            log.warning("%s plugin %s failed to load: %s", kind, ep.name, e)


__all__ = ["admit", "check_removable", "load_entry_points"]
