"""Helpers every trainer adapter needs: completion text from any message format, a
rubric from a recipe name (options and judge included) or a ready rubric, and the
environment-variable configuration used on Ray workers."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import Any

from groundrl.rubric import Rubric

ENV_RECIPE = "GROUNDRL_RECIPE"
ENV_OPTIONS = "GROUNDRL_OPTIONS"
ENV_OPTION_PREFIX = "GROUNDRL_OPTION_"


def completion_text(completion: Any) -> str:
    """Text of a completion in TRL's standard (``str``) or conversational format
    (``[{"role": "assistant", "content": str | [{"type": "text", "text": …}, …]}]``);
    for a list of messages the last assistant message is used. Anything else becomes
    ``""`` so the rewards score it as malformed rather than crash."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        msgs = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in msgs if m.get("role", "assistant") == "assistant"] or msgs
        if not assistant:
            return ""
        content = assistant[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(
                p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return ""


def merge_options(
    recipe_options: Mapping[str, Any] | None, judge: Any, options: Mapping[str, Any]
) -> dict[str, Any]:
    """``recipe_options=`` and ``**options`` together (a key in both must agree), plus
    ``judge=`` as the ``judge`` option."""
    if recipe_options is not None and not isinstance(recipe_options, Mapping):
        raise TypeError(f"recipe_options must be a mapping, got {type(recipe_options).__name__}")
    merged = dict(recipe_options or {})
    for key, value in options.items():
        if key in merged and merged[key] is not value and merged[key] != value:
            raise ValueError(f"option {key!r} given twice with different values")
        merged[key] = value
    if judge is not None:
        if "judge" in merged:
            raise ValueError("judge given twice (judge= and in the options)")
        merged["judge"] = judge
    return merged


def resolve_rubric(
    recipe_or_rubric: str | Rubric,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    **options: Any,
) -> Rubric:
    """A rubric from a recipe name with its options and judge (a mapping, a
    :class:`~groundrl.judges.config.JudgeConfig` or a judge object), or ``Rubric`` as is."""
    merged = merge_options(recipe_options, judge, options)
    if isinstance(recipe_or_rubric, Rubric):
        if merged:
            raise TypeError("options and judge are for recipe names; build the Rubric with them instead")
        return recipe_or_rubric
    from groundrl.recipes import get_recipe

    return get_recipe(recipe_or_rubric).rubric(**merged)


def label_field(recipe_or_rubric: str | Rubric) -> str | None:
    if isinstance(recipe_or_rubric, Rubric):
        return None
    from groundrl.recipes import get_recipe

    return get_recipe(recipe_or_rubric).label_field


def env_config(environ: Mapping[str, str] | None = None) -> tuple[str | None, dict[str, Any], Any]:
    """``(recipe, options, judge)`` from environment variables (how Ray workers that
    load a reward file by path are configured):

    * ``GROUNDRL_RECIPE``: the recipe name;
    * ``GROUNDRL_OPTIONS``: a JSON object of recipe options, and/or one variable per
      option, ``GROUNDRL_OPTION_<NAME>`` (e.g. ``GROUNDRL_OPTION_LENIENT=true``), read
      as text and converted by the option's declared type; ``GROUNDRL_ACTION_MAP`` is
      the older spelling of ``GROUNDRL_OPTION_ACTION_MAP``;
    * ``GROUNDRL_JUDGE`` (JSON) or ``GROUNDRL_JUDGE_<SETTING>``: the judge
      (:meth:`~groundrl.judges.config.JudgeConfig.from_env`).
    """
    from groundrl.judges.config import JudgeConfig

    env = os.environ if environ is None else environ
    options: dict[str, Any] = {}
    raw = env.get(ENV_OPTIONS)
    if raw:
        try:
            options = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"{ENV_OPTIONS} is not JSON: {e}") from None
        if not isinstance(options, dict):
            raise ValueError(f"{ENV_OPTIONS} must be a JSON object of recipe options")
    if env.get("GROUNDRL_ACTION_MAP"):
        options.setdefault("action_map", env["GROUNDRL_ACTION_MAP"])
    for key, value in env.items():
        if key.startswith(ENV_OPTION_PREFIX) and value:
            options[key[len(ENV_OPTION_PREFIX) :].lower()] = value
    return env.get(ENV_RECIPE) or None, options, JudgeConfig.from_env(env)


def options_for(recipe: Any, options: Mapping[str, Any], judge: Any = None) -> tuple[dict[str, Any], Any]:
    """The part of shared settings that ``recipe`` declares: on a server or a verl run
    that mixes recipes, each option goes to the recipes that have it and the judge to
    those with model-based parts. An option that no recipe declares is an error."""
    from groundrl.recipes import OptionError, get_recipe, recipe_names

    declared = {o.name for o in recipe.options}
    for key in options:
        if key not in declared and not any(
            key in {o.name for o in get_recipe(n).options} for n in recipe_names()
        ):
            raise OptionError(f"no recipe has the option {key!r}")
    mine = {k: v for k, v in options.items() if k in declared}
    return mine, judge if recipe.judge_factory is not None else None


class RubricCache:
    """Rubrics built once per (recipe, options, judge) setting, for the module-level
    reward functions that trainers call with settings on every call."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._rubrics: dict[str, Rubric] = {}
        self._lock = threading.Lock()

    def get(self, recipe: str, options: Mapping[str, Any], judge: Any) -> Rubric:
        judge_key = judge.to_dict() if hasattr(judge, "to_dict") else judge
        key = json.dumps([recipe, dict(options), judge_key], sort_keys=True, default=repr)
        with self._lock:
            if key not in self._rubrics:
                if len(self._rubrics) >= self.size:
                    self._rubrics.pop(next(iter(self._rubrics))).close()
                self._rubrics[key] = resolve_rubric(recipe, options, judge)
            return self._rubrics[key]
