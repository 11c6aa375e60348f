"""One option syntax for every command that takes a recipe.

:func:`recipe_command` adds to a Typer command:

* ``-O/--option KEY=VALUE`` (repeatable): any option the recipe declares, converted by
  its declared type (``groundrl recipes`` lists them);
* the ``--judge-*`` flags of :class:`~groundrl.judges.config.JudgeConfig` (``--judge-backend``,
  ``--judge-model``, ``--judge-url``, …), shown in their own help panel.

The command receives them as one :class:`RecipeArgs` in its ``recipe_args`` parameter
and calls :meth:`RecipeArgs.options` (or :meth:`RecipeArgs.rubric`). Older per-option
flags (``--action-map``, ``--lenient``, ``--tau``) stay as aliases: they are merged with
``-O`` and must agree with it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import typer

from groundrl.judges.config import JudgeConfig
from groundrl.recipes import Recipe, get_recipe
from groundrl.recipes.options import OptionError, parse_assignments

PANEL = "Judge (model-based parts)"
_TYPES: dict[str, object] = {
    "str": str | None,
    "str | None": str | None,
    "int": int | None,
    "int | None": int | None,
}
_TYPES |= {"float": float | None, "float | None": float | None, "bool": bool | None}
# one flag per JudgeConfig setting, its help from the field: serve, score, train, bench, curate alike
_JUDGE_FLAGS: dict[str, tuple[Any, str]] = {
    name: (_TYPES.get(typ, str | None), help_) for name, typ, help_ in JudgeConfig.settings()
}


def _flag_decls(key: str) -> list[str]:
    flag = f"--judge-{key.replace('_', '-')}"
    if _JUDGE_FLAGS[key][0] == (bool | None):
        return [f"{flag}/--judge-no-{key.replace('_', '-')}"]
    return [flag]


def judge_config(values: Mapping[str, Any]) -> JudgeConfig | None:
    """A JudgeConfig from the ``--judge-*`` values, ``None`` when none is set; settings
    without ``--judge-backend`` are an error."""
    given = {k: v for k, v in values.items() if v is not None}
    if not given:
        return None
    if "backend" not in given:
        flags = ", ".join(f"--judge-{k.replace('_', '-')}" for k in given)
        raise typer.BadParameter(f"{flags} need --judge-backend", param_hint="--judge-backend")
    try:
        return JudgeConfig.from_mapping(given)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--judge-*") from e


@dataclass
class RecipeArgs:
    """What the ``-O`` and ``--judge-*`` flags said."""

    assignments: list[str] = field(default_factory=list)
    judge: JudgeConfig | None = None
    judge_flags: dict[str, object] = field(default_factory=dict)  # the --judge-* settings given explicitly

    def judge_spec(self) -> dict[str, object] | None:
        """The judge as JSON for worker processes: its non-default settings plus every
        setting given on the command line (an explicit default must survive, e.g. a
        ``--judge-allow-local-images`` that the server would otherwise turn off)."""
        return None if self.judge is None else {**self.judge.to_dict(), **self.judge_flags}

    def options(self, recipe: Recipe | str, aliases: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Validated recipe options: ``-O`` assignments, alias flags (``None`` = not
        given), and the judge; any problem raises ``typer.BadParameter`` naming it."""
        rec = recipe if isinstance(recipe, Recipe) else recipe_by_name(recipe)
        try:
            raw: dict[str, Any] = parse_assignments(self.assignments)
            for key, value in (aliases or {}).items():
                if value is None:
                    continue
                rec.option(key)  # the alias flag must apply to this recipe
                if key in raw and rec.option(key).convert(raw[key], rec.name) != rec.option(key).convert(
                    value, rec.name
                ):
                    raise OptionError(f"--{key.replace('_', '-')} and -O {key}=… disagree")
                raw[key] = value
            if self.judge is not None:
                if rec.judge_factory is None:
                    raise OptionError(
                        f"recipe {rec.name!r} has no model-based parts; drop the --judge-* flags"
                    )
                raw["judge"] = self.judge
            for key in raw:
                if not rec.option(key).cli_settable:
                    raise OptionError(f"recipe {rec.name!r}, option {key!r} is set from Python, not the CLI")
            rec.resolve_options(raw)  # convert once now, so errors come before any work
        except OptionError as e:
            raise typer.BadParameter(str(e), param_hint="-O/--option") from e
        return raw

    def rubric(self, recipe: Recipe | str, aliases: Mapping[str, Any] | None = None) -> Any:
        """The recipe's rubric for these flags; the caller closes it (``rubric.close()``)."""
        rec = recipe if isinstance(recipe, Recipe) else recipe_by_name(recipe)
        options = self.options(rec, aliases)
        try:
            return rec.rubric(**options)
        except (ValueError, OSError) as e:
            raise typer.BadParameter(str(e), param_hint="-O/--option") from e


def need_judge(judge: JudgeConfig | None) -> JudgeConfig:
    """``judge``, or ``typer.BadParameter`` when no ``--judge-*`` flag gave one (what
    :func:`open_judge` raises by default, so ``judge = need_judge(judge)`` right before
    ``with open_judge(judge)`` changes no message and types the config as present)."""
    if judge is None:
        raise typer.BadParameter("this command needs a judge: give --judge-backend and --judge-model")
    return judge


def judge_backend(judge: JudgeConfig | None, required: bool = True) -> Any:
    """The backend for ``--judge-*`` (``None`` when no judge was given and none is
    required); bad settings and a missing judge raise ``typer.BadParameter``."""
    if judge is None and not required:
        return None
    judge = need_judge(judge)
    try:
        return judge.make_backend()
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e), param_hint="--judge-*") from e


def open_judge(judge: JudgeConfig | None, required: bool = True) -> contextlib.AbstractContextManager[Any]:
    """``with open_judge(judge) as backend:`` gives :func:`judge_backend`'s backend (or
    ``None``) and closes it when the block ends, by an error or Ctrl-C too. A backend
    that is not a ``JudgeBackend`` (duck-typed) is closed when it has a ``close``."""
    backend = judge_backend(judge, required)
    if hasattr(backend, "__exit__"):
        return backend
    return (
        contextlib.closing(backend)
        if callable(getattr(backend, "close", None))
        else contextlib.nullcontext(backend)
    )


def recipe_by_name(name: str) -> Recipe:
    try:
        return get_recipe(name)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="RECIPE") from e


def _extra_params(with_options: bool) -> list[inspect.Parameter]:
    kw = inspect.Parameter.KEYWORD_ONLY
    params = []
    if with_options:
        params.append(
            inspect.Parameter(
                "option_",
                kw,
                annotation=list[str] | None,
                default=typer.Option(
                    None,
                    "-O",
                    "--option",
                    metavar="KEY=VALUE",
                    help="Recipe option, repeatable (see `groundrl recipes`), e.g. -O lenient=true.",
                ),
            )
        )
    for key, (typ, help_) in _JUDGE_FLAGS.items():
        params.append(
            inspect.Parameter(
                f"judge_{key}_",
                kw,
                annotation=typ,
                default=typer.Option(None, *_flag_decls(key), help=help_, rich_help_panel=PANEL),
            )
        )
    return params


def recipe_command(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: ``func(..., recipe_args: RecipeArgs)`` becomes a Typer command with
    ``-O`` and the ``--judge-*`` flags (see the module docstring)."""

    def fill(kwargs: dict[str, Any], judge: JudgeConfig | None, given: dict[str, Any]) -> None:
        kwargs["recipe_args"] = RecipeArgs(list(kwargs.pop("option_", None) or []), judge, given)

    return _with_flags(func, "recipe_args", _extra_params(with_options=True), fill)


def judge_command(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for commands that run a judge but take no recipe (bench, curate):
    ``func(..., judge: JudgeConfig | None)`` gets the ``--judge-*`` flags."""

    def fill(kwargs: dict[str, Any], judge: JudgeConfig | None, given: dict[str, Any]) -> None:
        kwargs["judge"] = judge

    return _with_flags(func, "judge", _extra_params(with_options=False), fill)


def _with_flags(
    func: Callable[..., Any],
    target: str,
    extra: list[inspect.Parameter],
    fill: Callable[[dict[str, Any], JudgeConfig | None, dict[str, Any]], None],
) -> Callable[..., Any]:
    hints = typing.get_type_hints(func)
    sig = inspect.signature(func)
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
    own = [p for p in own if p.name != target]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {k: kwargs.pop(f"judge_{k}_", None) for k in _JUDGE_FLAGS}
        fill(kwargs, judge_config(values), {k: v for k, v in values.items() if v is not None})
        return func(*args, **kwargs)

    del wrapper.__wrapped__  # Typer must read the new signature, not the wrapped one
    wrapper.__signature__ = sig.replace(parameters=[*own, *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in (*own, *extra)}
    return wrapper
