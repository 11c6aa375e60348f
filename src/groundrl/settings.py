"""One parser for every settings block: a YAML mapping → a frozen dataclass, checked once.

:func:`parse_settings` reads the allowed keys, their types and their defaults from the
dataclass itself, so a block is declared once (its fields) and never re-checked by hand:

* an unknown key raises, naming the block, the nearest field (``did you mean``) and every
  allowed key in declaration order;
* each value is checked against its field's annotation: ``int`` (not ``bool``), ``float``
  (an int is accepted and made a float; finite), ``bool``, ``str``, ``Literal[...]``,
  ``X | None``, ``list[X]`` / ``tuple[X, ...]`` (a YAML list either way), ``dict[...]``,
  a nested dataclass (parsed by the same rules, named ``block.key``) and ``Any``;
* a missing key takes the field's default; a field without a default is required.

Range checks that a type cannot say stay in the class's ``__post_init__``. Errors are
:class:`SettingsError` (a ``ValueError``) whose text starts with ``block.key``.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Hints:
...     p: float = 0.5
...     seed: int = 0
>>> parse_settings(Hints, {"p": 1}, "step_grpo")
Hints(p=1.0, seed=0)
>>> parse_settings(Hints, {"seeds": 1}, "step_grpo")
Traceback (most recent call last):
...
groundrl.settings.SettingsError: step_grpo: unknown key 'seeds' (did you mean 'seed'?); allowed: p, seed
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

T = TypeVar("T")


class SettingsError(ValueError):
    """A settings block that cannot be used; the message names ``block.key`` and the fix."""


def unknown_key(block: str, key: str, allowed: list[str]) -> SettingsError:
    """The one 'unknown key' message: the block, the nearest allowed key, every allowed key."""
    near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return SettingsError(f"{block}: unknown key {key!r}{hint}; allowed: {', '.join(allowed)}")


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:  # resolved once per class (annotations are strings under PEP 563)
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def settings_fields(cls: type) -> list[dataclasses.Field[Any]]:
    """The fields a block may set (``init`` fields, in declaration order)."""
    return [f for f in dataclasses.fields(cls) if f.init]


def parse_settings(cls: type[T], raw: Any, block: str) -> T:
    """``raw`` (a mapping, ``None`` for all defaults, or already a ``cls``) → ``cls``."""
    if isinstance(raw, cls):
        return raw
    if raw is None:
        raw = {}
    fields = settings_fields(cls)
    names = [f.name for f in fields]
    if not isinstance(raw, Mapping):
        raise SettingsError(f"{block} must be a mapping of {', '.join(names)}, got {raw!r}")
    for key in raw:
        if key not in names:
            raise unknown_key(block, str(key), names)
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in fields:
        if f.name in raw:
            values[f.name] = check_value(raw[f.name], hints[f.name], f"{block}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SettingsError(f"{block}.{f.name} is required")
    try:
        return cls(**values)
    except SettingsError:
        raise
    except (TypeError, ValueError) as e:  # __post_init__'s range checks
        msg = str(e)
        raise SettingsError(msg if msg.startswith(block) else f"{block}: {msg}") from None


_WHAT = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(tp)))
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _describe(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        return "a list"
    if origin is dict or tp is dict:
        return "a mapping"
    if dataclasses.is_dataclass(tp):
        return "a mapping"
    return _WHAT.get(tp, getattr(tp, "__name__", str(tp)))


def check_value(value: Any, tp: Any, where: str) -> Any:
    """``value`` checked against the annotation ``tp`` (and converted: a YAML list to a
    tuple, an int to a float, a mapping to a nested dataclass); raises naming ``where``."""
    out = _convert(value, tp, where)
    if out is _BAD:
        raise SettingsError(f"{where} must be {_describe(tp)}, got {value!r}")
    return out


_BAD = object()


def _convert(value: Any, tp: Any, where: str) -> Any:
    if tp is Any or tp is object:
        return value
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None:
            return None if type(None) in args else _BAD
        for arg in (a for a in args if a is not type(None)):
            out = _convert(value, arg, where)
            if out is not _BAD:
                return out
        return _BAD
    if origin is Literal:
        return value if value in args else _BAD
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            return _BAD
        item = args[0] if args else Any
        items = [check_value(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict or tp is dict or origin is Mapping:
        return dict(value) if isinstance(value, Mapping) else _BAD
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return parse_settings(tp, value, where)
    return _scalar(value, tp)


def _scalar(value: Any, tp: Any) -> Any:
    if tp is bool:
        return value if isinstance(value, bool) else _BAD
    if isinstance(value, bool):  # YAML's true is not a number
        return _BAD
    if tp is float:
        ok = isinstance(value, (int, float)) and math.isfinite(value)
        return float(value) if ok else _BAD
    if isinstance(tp, type):
        return value if isinstance(value, tp) else _BAD
    return value
