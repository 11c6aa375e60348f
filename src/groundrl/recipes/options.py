"""A recipe's options, declared once: name, type, default, help, allowed values.

Everything else comes from the declaration: the values a builder receives (converted
and defaulted), the CLI's ``-O/--option KEY=VALUE`` parsing, YAML ``recipe_options:``
validation, ``groundrl recipes`` and the docs table.

Types and what each accepts (strings come from the CLI, YAML gives native values):

========  ==============================================================================
``bool``  ``True``/``False``; strings ``true/false/yes/no/on/off/1/0`` (any case)
``int``   integers (not bools); integer strings
``float`` finite numbers; number strings
``str``   strings
``path``  a path string or ``Path``; a mapping too where ``mapping_ok`` (inline data)
``list``  a list/tuple; a JSON list string ``[...]`` or a comma-separated string
``json``  any JSON value; strings are parsed as JSON
``judge`` a judge object, a :class:`~groundrl.judges.config.JudgeConfig`, or its mapping
``object`` a Python object (not settable from the command line)
========  ==============================================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from groundrl.judges.config import JudgeConfig

# default of an option the builder keeps its own default for (untyped, {name: help} options)
UNSET: Any = type("Unset", (), {"__repr__": lambda self: "UNSET"})()
TYPES = ("bool", "int", "float", "str", "path", "list", "json", "judge", "object")
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class OptionError(ValueError, TypeError):
    """A recipe option that is unknown or has a bad value (a configuration error).
    A ValueError, and a TypeError too, as unknown keyword arguments are."""


class OptionDescription(TypedDict):
    """:meth:`Option.describe`, as ``groundrl recipes --json`` prints it: ``default`` is
    the JSON value (its ``repr`` when it has none; ``None`` when unset)."""

    name: str
    type: str
    default: object
    help: str
    choices: NotRequired[list[object]]


@dataclass(frozen=True)
class Option:
    """One recipe option. ``choices`` restricts the converted value; ``mapping_ok``
    lets a ``path`` option take its data inline (a mapping) instead of a file."""

    name: str
    type: str = "str"
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] = ()
    mapping_ok: bool = False
    aliases: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"option name {self.name!r} must be a Python identifier")
        if self.type not in TYPES:
            raise ValueError(f"option {self.name!r}: type {self.type!r} is not one of {', '.join(TYPES)}")

    @property
    def cli_settable(self) -> bool:
        return self.type != "object"

    def convert(self, value: Any, recipe: str = "?") -> Any:
        """The value as the builder receives it; raises :class:`OptionError` naming the
        recipe, the option and what it takes."""
        if value is None:
            return None
        try:
            out = _CONVERT[self.type](self, value)
        except (ValueError, TypeError) as e:
            raise OptionError(f"recipe {recipe!r}, option {self.name!r}: {e}") from None
        if self.choices and out not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise OptionError(f"recipe {recipe!r}, option {self.name!r}: {out!r} is not one of {allowed}")
        return out

    def describe(self) -> OptionDescription:
        out: OptionDescription = {
            "name": self.name,
            "type": self.type,
            "default": None
            if self.default is UNSET
            else self.default
            if _jsonable(self.default)
            else repr(self.default),
            "help": self.help,
        }
        if self.choices:
            out["choices"] = list(self.choices)
        return out


def _jsonable(x: Any) -> bool:
    try:
        json.dumps(x)
    except (TypeError, ValueError):
        return False
    return True


def _bool(opt: Option, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
        return v.strip().lower() in _TRUE
    raise ValueError(f"expected a boolean (true/false), got {v!r}")


def _int(opt: Option, v: Any) -> int:
    if isinstance(v, bool):
        raise ValueError(f"expected an integer, got {v!r}")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            pass
    raise ValueError(f"expected an integer, got {v!r}")


def _float(opt: Option, v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError(f"expected a number, got {v!r}")
    try:
        out = float(v.strip() if isinstance(v, str) else v)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {v!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"expected a finite number, got {v!r}")
    return out


def _str(opt: Option, v: Any) -> str:
    if isinstance(v, str):
        return v
    raise ValueError(f"expected a string, got {type(v).__name__}")


def _path(opt: Option, v: Any) -> Any:
    if isinstance(v, Mapping) and opt.mapping_ok:
        return dict(v)
    if isinstance(v, (str, Path)) and str(v):
        p = Path(v).expanduser()
        if not p.exists():
            raise ValueError(f"no such file: {v}")
        return str(p)
    what = "a path or a mapping" if opt.mapping_ok else "a path"
    raise ValueError(f"expected {what}, got {type(v).__name__}")


def _list(opt: Option, v: Any) -> list[Any]:
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            out = json.loads(s)
            if isinstance(out, list):
                return out
        return [x.strip() for x in s.split(",") if x.strip()]
    raise ValueError(f"expected a list, got {type(v).__name__}")


def _json(opt: Option, v: Any) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError as e:
            raise ValueError(f"expected JSON ({e})") from None
    return v


def _judge(opt: Option, v: Any) -> Any:
    if isinstance(v, str):
        v = _json(opt, v)
    if isinstance(v, Mapping):
        return JudgeConfig.from_mapping(v)
    return v  # a JudgeConfig or a ready judge object


def _object(opt: Option, v: Any) -> Any:
    if isinstance(v, str):
        raise ValueError("takes a Python object and cannot be set from text")
    return v


_CONVERT = {
    "bool": _bool,
    "int": _int,
    "float": _float,
    "str": _str,
    "path": _path,
    "list": _list,
    "json": _json,
    "judge": _judge,
    "object": _object,
}


def parse_assignments(items: Sequence[str], flag: str = "-O") -> dict[str, str]:
    """``["a=1", "b-c=x=y"]`` → ``{"a": "1", "b_c": "x=y"}`` (``-`` in keys read as ``_``)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise OptionError(f"{flag} takes KEY=VALUE, got {item!r}")
        if key in out and out[key] != value:
            raise OptionError(f"{flag} {key} given twice ({out[key]!r} and {value!r})")
        out[key] = value
    return out
