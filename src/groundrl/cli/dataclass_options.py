"""Typer flags generated from a settings dataclass: each setting is defined once, as a field.

Like TRL's dataclass fields feeding ``HfArgumentParser``: a field becomes a flag when its
metadata has ``help``; the flag's type and default are the field's. Made with
:func:`flag`, the metadata may also hold

* ``flag``: the flag's name when it is not ``--field-name`` (``"--max-body-mb"``);
* ``scale``: the field's value is the flag's times this (MiB for a flag in MiB);
* ``cli_default``: the flag's default when it differs from the field's (in flag units);
* ``zero_is_none``: the flag's 0 sets the field to ``None`` ("no deadline");
* ``min`` / ``max``: bounds typer checks (in flag units);
* ``param``: a ready ``typer.Option``/``typer.Argument`` (a callback, a metavar).

:func:`settings_command` gives a command one parameter typed as the dataclass; Typer sees
the generated flags in its place and the command receives the built dataclass (whose own
checks run then: a ``ValueError`` becomes a usage error).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

import typer


def flag(default: Any = dataclasses.MISSING, help: str = "", **meta: Any) -> Any:  # noqa: A002
    """``dataclasses.field`` whose metadata makes it a flag (see the module docstring)."""
    return dataclasses.field(default=default, metadata={"help": help, **meta})


@dataclasses.dataclass(frozen=True)
class Flag:
    """One generated flag: the field it sets and how its value converts."""

    field: str
    param: inspect.Parameter
    scale: float | None = None
    zero_is_none: bool = False
    integral: bool = False  # the field is an int: a scaled value is rounded down (at least 1)

    def value(self, given: Any) -> Any:
        """The field's value for the flag's value."""
        if self.zero_is_none and not given:
            return None
        if self.scale is not None:
            return max(1, int(given * self.scale)) if self.integral else given * self.scale
        return given


def _flag_type(typ: Any, meta: Mapping[str, Any]) -> Any:
    if meta.get("scale") is not None:
        return float
    args = [a for a in typing.get_args(typ) if a is not type(None)]
    if meta.get("zero_is_none") and len(args) == 1:
        return args[0]  # None is spelt 0 on the command line
    return typ


def _default(f: dataclasses.Field, meta: Mapping[str, Any]) -> Any:
    if "cli_default" in meta:
        return meta["cli_default"]
    if f.default is dataclasses.MISSING:
        return ...  # required
    scale = meta.get("scale")
    return f.default / scale if scale is not None and f.default is not None else f.default


def flags(cls: type) -> list[Flag]:
    """The flags of ``cls``: one per field with ``help`` metadata, in field order."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        meta = dict(f.metadata)
        if not meta.get("help") and "param" not in meta:
            continue  # set from Python only
        typ = _flag_type(hints[f.name], meta)
        info = meta.get("param")
        if info is None:
            name = meta.get("flag") or f"--{f.name.replace('_', '-')}"
            decl = f"{name}/--no-{name[2:]}" if typ is bool else name
            bounds = {k: meta[k] for k in ("min", "max") if k in meta}
            info = typer.Option(_default(f, meta), decl, help=meta["help"], **bounds)
        param = inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=typ, default=info)
        out.append(
            Flag(f.name, param, meta.get("scale"), bool(meta.get("zero_is_none")), hints[f.name] is int)
        )
    return out


def settings_command(cls: type, target: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the command's parameter ``target`` (typed ``cls``) becomes ``cls``'s
    flags, at its place in the signature; the command receives ``cls(**values)``."""
    generated = flags(cls)

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(func)
        params = [
            p.replace(annotation=hints.get(p.name, p.annotation))
            for p in inspect.signature(func).parameters.values()
        ]
        names = [p.name for p in params]
        if target not in names:
            raise TypeError(f"{func.__name__} has no parameter {target!r} for the {cls.__name__} flags")
        clash = sorted({g.field for g in generated} & (set(names) - {target}))
        if clash:
            raise TypeError(f"{func.__name__}: parameter {clash[0]!r} is also a {cls.__name__} field")
        at = names.index(target)
        new = [*params[:at], *(g.param for g in generated), *params[at + 1 :]]
        kinds = {p.kind for p in new}
        if kinds - {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY}:
            raise TypeError(f"{func.__name__}: only plain parameters can take generated flags")
        new = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in new]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {g.field: g.value(kwargs.pop(g.field)) for g in generated}
            try:
                kwargs[target] = cls(**values)
            except ValueError as e:
                raise typer.BadParameter(str(e)) from e
            return func(*args, **kwargs)

        del wrapper.__wrapped__  # Typer must read the new signature, not the wrapped one
        wrapper.__signature__ = inspect.Signature(new)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in new}
        return wrapper

    return decorate
