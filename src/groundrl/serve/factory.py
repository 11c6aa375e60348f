"""Build the reward server from a plain, JSON-able configuration.

The CLI, uvicorn's worker processes (``--workers N`` needs an import string, so each
worker rebuilds the app from an owner-only file named by ``$GROUNDRL_SERVE_CONFIG_FILE``) and Ray Serve replicas all go
through :func:`build_app`, so a judge (which holds a backend and cannot be pickled) is
made in the process that uses it.

Configuration keys (all optional): ``recipe``, ``token``, ``docs``, ``fields``, every
field of :class:`~groundrl.serve.limits.Limits` (``max_batch`` … ``part_timeout_s``, the one
definition of each limit; see :func:`groundrl.serve.app.create_app`); ``options``: recipe options
by name (``action_map``, ``lenient``, ``tau``, any registered recipe's), each given to
every recipe that declares it (the server's ``recipe`` alone when it declares it);
``judge``: a :class:`~groundrl.judges.config.JudgeConfig` mapping (``{"backend",
"model", "url", …}``) for the model-based parts of ``recipe``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any

from groundrl.judges.config import JudgeConfig
from groundrl.recipes import get_recipe, recipe_names
from groundrl.serve.limits import LIMIT_KEYS

ENV = "GROUNDRL_SERVE_CONFIG"
APP_KEYS = ("recipe", "token", *LIMIT_KEYS, "docs", "fields")  # create_app's keywords
KEYS = (*APP_KEYS, "options", "judge")


def check_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the keys and the shape of ``options``/``judge`` without building anything."""
    if not isinstance(config, Mapping):
        raise TypeError(f"the server configuration must be a mapping, got {type(config).__name__}")
    unknown = sorted(set(config) - set(KEYS))
    if unknown:
        raise ValueError(f"unknown server setting {unknown[0]!r}; settings are {', '.join(KEYS)}")
    options = config.get("options") or {}
    if not isinstance(options, Mapping):
        raise TypeError("options must be a mapping {option: value}")
    judge = config.get("judge")
    if judge is not None:
        if not isinstance(judge, Mapping) or not judge.get("backend"):
            raise ValueError('judge must be {"backend": ..., "model": ..., "url": ...}')
        if not config.get("recipe"):
            raise ValueError("a judge scores the model-based parts of the server's recipe: give recipe too")
        JudgeConfig.from_mapping(judge)  # bad judge settings fail here, naming the setting
    return dict(config)


def recipe_options(options: Mapping[str, Any], recipe: str | None, judge: Any = None) -> dict[str, dict]:
    """``{recipe: {option: value}}``: each option goes to every recipe declaring it, the
    judge to ``recipe``. An option no recipe declares is an error."""
    out: dict[str, dict[str, Any]] = {}
    declared = {n: {o.name for o in get_recipe(n).options} for n in recipe_names()} if options else {}
    for opt, value in options.items():
        takers = [n for n, names in declared.items() if opt in names]
        if not takers:
            raise ValueError(f"no recipe has the option {opt!r}")
        if recipe is not None and recipe in takers:
            takers = [recipe]  # the server's recipe takes it; others stay at their defaults
        for n in takers:
            out.setdefault(n, {})[opt] = value
    if judge is not None:
        out.setdefault(recipe, {})["judge"] = judge  # type: ignore[arg-type]
    return out


def build_app(config: Mapping[str, Any] | None = None):
    """A FastAPI app from a configuration dict (see the module docstring)."""
    # lazy: serve.app brings fastapi; loaded only when this runs
    from groundrl.serve.app import create_app

    config = check_config(config or {})
    recipe = config.get("recipe")
    judge = None
    spec = config.get("judge")
    if spec is not None:
        # a request must not make the server read files: no local image paths unless the
        # configuration names a root for them
        if "image_root" not in spec and "allow_local_images" not in spec:
            spec = {**spec, "allow_local_images": False}
        judge = JudgeConfig.from_mapping(spec)  # the recipe builds its judge from it
    opts = recipe_options(config.get("options") or {}, recipe, judge)
    return create_app(**{k: config[k] for k in APP_KEYS if k in config}, recipe_options=opts)


ENV_FILE = "GROUNDRL_SERVE_CONFIG_FILE"


def write_config_file(config: Mapping[str, Any]) -> str:
    """The configuration in a new file readable by its owner only (mode 0600), for worker
    processes: a token in an environment variable is visible to anyone who can read the
    process's environment (issue 26). Returns the path; the caller removes it. A write
    that fails (a full disk: the CLI prints one line for it) leaves no partial file."""
    fd, path = tempfile.mkstemp(prefix="groundrl-serve-", suffix=".json")  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(dict(config), f)
    except BaseException:
        os.unlink(path)  # a half-written file would hold part of the token and name no config
        raise
    return path


def app_from_env():
    """uvicorn factory for worker processes: ``groundrl.serve.factory:app_from_env``. Reads
    the configuration from the owner-only file named by ``$GROUNDRL_SERVE_CONFIG_FILE``
    (what ``groundrl serve --workers N`` sets), else from ``$GROUNDRL_SERVE_CONFIG``."""
    path = os.environ.get(ENV_FILE)
    if path:
        with open(path, encoding="utf-8") as f:
            return build_app(json.load(f))
    raw = os.environ.get(ENV)
    if not raw:
        raise RuntimeError(f"set {ENV_FILE} (a JSON file) or {ENV} to the server's JSON configuration")
    return build_app(json.loads(raw))
