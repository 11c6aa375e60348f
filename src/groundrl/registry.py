"""One registry shape for every pluggable kind: recipes, stage kinds, vocabularies, task
types and judge backends are each a :class:`Registry` (verl's one ``@register(name)``),
so they register, look up, list and load plugins alike. The rules they share (``admit``
and ``check_removable`` decide what may go in and out, with one wording for the errors;
``load_entry_points`` reads a plugin group with one failure policy):

- a built-in can never be replaced nor removed;
- registering another object under a taken name raises unless ``replace=True``;
- registering the same object again is a no-op.

>>> admit("recipe", "x", obj := object(), None, builtin=False, replace=False)
True
>>> admit("recipe", "x", obj, obj, builtin=False, replace=False)
False
"""

from __future__ import annotations

import difflib
import importlib
import logging
import sys
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


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
    group: str,
    kind: str,
    accept: Callable[[str, object], object],
    log: logging.Logger,
    *,
    skip: Callable[[str], bool] | None = None,
) -> None:
    """Load every entry point of ``group`` (but those whose name ``skip`` says is known)
    and pass ``(name, loaded object)`` to ``accept`` (which registers what it
    recognises). A plugin that fails to import or to register is logged as a warning
    naming it and skipped: a broken plugin never breaks the built-ins."""
    for ep in entry_points(group=group):
        if skip is not None and skip(ep.name):
            continue
        try:
            accept(ep.name, ep.load())
        except Exception as e:
            log.warning("%s plugin %s failed to load: %s", kind, ep.name, e)


def did_you_mean(name: object, names: list[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``names`` to ``name``, else ``""``."""
    # cutoff 0.7 [ours]: "grpp" → "grpo", but not "nope" → "openai" (0.6)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.7) if isinstance(name, str) else []
    return f" (did you mean {close[0]!r}?)" if close else ""


class Registry(Generic[T]):
    """The items of one pluggable ``kind``, by name: built-ins first, then those registered
    in this process, then those of installed packages (entry-point ``group``).

    ``name_of`` reads an item's own name (``None``: items are registered under a name
    given with them, as judge backends are); ``check(name, item)`` refuses a malformed
    item with ``TypeError`` / ``ValueError``; ``from_plugin(entry point name, loaded
    object)`` turns what an entry point names into an item, or ``None`` for a module
    that registered its own on import (default: the object itself, or ``None`` for a
    module; with ``item_type``, anything else that is not one is refused with
    ``TypeError``); ``error`` is the exception an unknown name raises (a ``ValueError``).

    Plugins are read on first use and again when ``sys.path`` has changed or a name is
    missed; a plugin that fails to import, convert or register is a warning naming it
    and is skipped, for every kind [ours: a broken plugin never breaks the built-ins].

    >>> makers: Registry[Callable[[], int]] = Registry("maker")
    >>> makers.builtin("zero", lambda: 0)()
    0
    >>> @makers.register("one")
    ... def one() -> int:
    ...     return 1
    >>> makers.get("one")(), makers.names(), makers.builtin_names()
    (1, ['zero', 'one'], ['zero'])
    >>> makers.get("onee")
    Traceback (most recent call last):
    ...
    ValueError: unknown maker 'onee' (did you mean 'one'?); choose one of zero, one
    """

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        name_of: Callable[[Any], str] | None = None,
        check: Callable[[str, Any], None] | None = None,
        from_plugin: Callable[[str, object], Any] | None = None,
        item_type: type | None = None,
        error: type[ValueError] = ValueError,
        log: logging.Logger | None = None,
    ) -> None:
        self.kind, self.group, self.error = kind, group, error
        self._name_of, self._check, self._from_plugin = name_of, check, from_plugin
        self._item_type = item_type
        self._log = log or logging.getLogger("groundrl")
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = {}  # built-in name -> "module:attribute", imported on first get
        self._builtins: list[str] = []
        self._lock = threading.RLock()  # reentrant: a plugin module may register on import
        self._scanned: tuple[str, ...] | None = None  # sys.path at the last entry-point scan
        self.version = 0  # bumped on every change, for callers that cache a derived view

    # registering -------------------------------------------------------------------------

    @overload
    def register(
        self, item_or_name: str, item: None = None, *, replace: bool = False
    ) -> Callable[[T], T]: ...
    @overload
    def register(self, item_or_name: str, item: T, *, replace: bool = False) -> T: ...
    @overload
    def register(self, item_or_name: T, item: None = None, *, replace: bool = False) -> T: ...
    def register(self, item_or_name: Any, item: Any = None, *, replace: bool = False) -> Any:
        """``register(item)``, ``register(name, item)``, or as a decorator
        ``@register(name)`` / ``@register``; returns the item. A built-in name raises,
        another item under a taken name raises unless ``replace=True``, the same item
        again is a no-op (:func:`admit`)."""
        if isinstance(item_or_name, str) and item is None:
            return lambda obj: self._add(item_or_name, obj, replace=replace, builtin=False)
        if isinstance(item_or_name, str):
            return self._add(item_or_name, item, replace=replace, builtin=False)
        return self._add(None, item_or_name, replace=replace, builtin=False)

    def builtin(self, item_or_name: Any, item: Any = None) -> Any:
        """Register a built-in (never replaced nor removed): ``builtin(item)`` or
        ``builtin(name, item)``; returns the item."""
        if isinstance(item_or_name, str):
            return self._add(item_or_name, item, replace=False, builtin=True)
        return self._add(None, item_or_name, replace=False, builtin=True)

    def mark_builtins(self) -> None:
        """Make every item registered so far a built-in: for a module that registers its
        built-ins through the public function, exactly as a plugin registers its own."""
        with self._lock:
            self._builtins.extend(n for n in self._items if n not in self._builtins)

    def builtin_lazy(self, name: str, ref: str) -> None:
        """A built-in named ``name`` that is ``module:attribute``, imported on first
        :meth:`get` (keeps heavy modules out of ``--help``)."""
        with self._lock:
            self._lazy[name] = ref
            self._builtins.append(name)
            self.version += 1

    def _add(self, name: str | None, item: Any, *, replace: bool, builtin: bool) -> Any:
        if name is None:
            if self._name_of is None:
                raise TypeError(f"register a {self.kind} with its name: register(name, item)")
            try:
                name = self._name_of(item)
            except Exception as e:
                raise TypeError(f"cannot read a {self.kind}'s name from {type(item).__name__}: {e}") from e
        elif self._name_of is not None and self._name_of(item) != name:
            raise ValueError(
                f"{self.kind} {name!r} is registered as {self._name_of(item)!r}: the names must match"
            )
        if self._check is not None:
            self._check(name, item)
        with self._lock:
            is_builtin = name in self._builtins
            current = self._get_loaded(name) if is_builtin else self._items.get(name)
            if admit(self.kind, name, item, current, builtin=is_builtin, replace=replace):
                self._items[name] = item
                if builtin:
                    self._builtins.append(name)
                self.version += 1
        return item

    def unregister(self, name: str) -> None:
        """Forget a registered or plugin item (tests, notebooks); a built-in raises."""
        check_removable(self.kind, name, builtin=name in self._builtins)
        with self._lock:
            if self._items.pop(name, None) is not None:
                self.version += 1

    # looking up --------------------------------------------------------------------------

    def get(self, name: str) -> T:
        """The item called ``name``; an unknown name raises ``error`` with the closest
        name and the names there are."""
        if isinstance(name, str) and (name in self._items or name in self._lazy):
            return self._get_loaded(name)  # a built-in or registered name: no plugin scan
        if isinstance(name, str):
            self.load_plugins(force=True)  # installed since the last scan, or unregistered
            if name in self._items:
                return self._items[name]
        names = self.names()
        raise self.error(
            f"unknown {self.kind} {name!r}{did_you_mean(name, names)}; choose one of {', '.join(names)}"
        )

    def _get_loaded(self, name: str) -> T:
        if name not in self._items and name in self._lazy:
            module, _, attr = self._lazy[name].partition(":")
            self._items[name] = getattr(importlib.import_module(module), attr)
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        self.load_plugins()
        return isinstance(name, str) and (name in self._items or name in self._lazy)

    def names(self) -> list[str]:
        """Every name :meth:`get` accepts: built-ins in registration order, then the
        others sorted [ours: plugin load order never changes a listing]."""
        self.load_plugins()
        rest = sorted(n for n in self._items if n not in self._builtins)
        return [*self._builtins, *rest]

    def builtin_names(self) -> list[str]:
        """The built-ins only: what a check of *our* items iterates, so an installed
        plugin cannot make it fail."""
        return list(self._builtins)

    def is_builtin(self, name: str) -> bool:
        return name in self._builtins

    def items(self) -> list[tuple[str, T]]:
        """``(name, item)`` for every name, in :meth:`names` order (built-ins imported)."""
        return [(n, self._get_loaded(n)) for n in self.names()]

    # plugins -----------------------------------------------------------------------------

    def load_plugins(self, *, force: bool = False) -> None:
        """Read the entry-point group (on first use, when ``sys.path`` changed, or
        ``force``); names already registered are not loaded again."""
        path = tuple(sys.path)
        if self.group is None or (self._scanned == path and not force):
            return
        with self._lock:
            if self._scanned == path and not force:
                return  # another thread scanned meanwhile
            self._scanned = path
            load_entry_points(self.group, self.kind, self._accept_plugin, self._log, skip=self._known)

    def _known(self, name: str) -> bool:
        return name in self._items or name in self._lazy

    def _accept_plugin(self, ep_name: str, obj: object) -> None:
        if self._from_plugin is not None:
            item = self._from_plugin(ep_name, obj)
        elif isinstance(obj, type(sys)):
            item = None  # a module that registered its own on import
        elif self._item_type is not None and not isinstance(obj, self._item_type):
            raise TypeError(f"it gave {type(obj).__name__}, expected a groundrl {self._item_type.__name__}")
        else:
            item = obj
        if item is not None:
            self._add(None if self._name_of else ep_name, item, replace=False, builtin=False)


__all__ = ["Registry", "admit", "check_removable", "did_you_mean", "load_entry_points"]
