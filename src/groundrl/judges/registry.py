"""The judge-backend registry: the names ``JudgeConfig.backend`` (``--judge-backend``, a
train file's ``judge: {backend: …}``, ``GROUNDRL_JUDGE_BACKEND``) may take.

A backend is registered as a *maker*: a callable taking the
:class:`~groundrl.judges.config.JudgeConfig` and returning a
:class:`~groundrl.judges.base.JudgeBackend`, which is what a backend class whose
constructor takes the config is. The built-ins (``openai``, ``transformers``) are
registered below through :func:`register_judge_backend`, as a plugin registers its own;
installed packages add theirs through the ``groundrl.judges`` entry-point group, each
entry point naming the maker (or a module that registers its own on import):

    [project.entry-points."groundrl.judges"]
    my_judge = "my_package.judge:MyBackend"

The registry's rules are every registry's (:mod:`groundrl.registry`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from groundrl.registry import admit, check_removable, load_entry_points

log = logging.getLogger("groundrl.judges")
ENTRY_POINT_GROUP = "groundrl.judges"
BUILTIN_BACKENDS = ("openai", "transformers")

_MAKERS: dict[str, Callable[[Any], Any]] = {}
_plugins_loaded = False


def register_judge_backend(
    name: str, maker: Callable[[Any], Any], *, replace: bool = False
) -> Callable[[Any], Any]:
    """Let ``JudgeConfig(backend=name, …)`` build its backend with ``maker(config)``;
    returns ``maker``."""
    if not isinstance(name, str) or not name.replace("_", "a").replace("-", "a").isalnum():
        raise ValueError(f"judge backend name {name!r}: use letters, digits, '_' and '-'")
    if not callable(maker):
        raise TypeError(f"judge backend {name!r}: register a class or function taking the JudgeConfig")
    builtin = name in BUILTIN_BACKENDS and name in _MAKERS
    if admit("judge backend", name, maker, _MAKERS.get(name), builtin=builtin, replace=replace):
        _MAKERS[name] = maker
    return maker


def unregister_judge_backend(name: str) -> None:
    """Forget a registered judge backend (tests, notebooks); a built-in raises."""
    check_removable("judge backend", name, builtin=name in BUILTIN_BACKENDS)
    _MAKERS.pop(name, None)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True

    def accept(name: str, obj: object) -> None:
        if callable(obj) and name not in _MAKERS:
            register_judge_backend(name, obj)

    load_entry_points(ENTRY_POINT_GROUP, "judge-backend", accept, log)


def judge_backend_names() -> tuple[str, ...]:
    """Every registered backend name: the built-ins first, then plugins."""
    _load_plugins()
    return tuple(_MAKERS)


def get_judge_backend(name: str) -> Callable[[Any], Any]:
    """The maker registered as ``name``; ``ValueError`` listing the names there are."""
    if isinstance(name, str) and name in _MAKERS:
        return _MAKERS[name]  # a built-in or registered name: no entry-point scan
    _load_plugins()
    try:
        return _MAKERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"judge backend {name!r} is not one of {', '.join(judge_backend_names())}") from None


def _openai(config: Any) -> Any:
    # lazy: import cycle: judges.openai_backend imports judges.config, which imports this module
    from groundrl.judges.openai_backend import OpenAIBackend

    return OpenAIBackend(
        config.model,
        str(config.url),
        api_key=os.environ.get(config.api_key_env),
        concurrency=config.concurrency,
        timeout=config.timeout,
        max_retries=config.retries,
        cache=config.cache,
        image_policy=config.image_policy(),
    )


def _transformers(config: Any) -> Any:
    # lazy: keeps torch / transformers out of light imports
    from groundrl.judges.transformers_backend import TransformersBackend

    return TransformersBackend(
        config.model,
        batch_size=config.batch_size,
        device=config.device,
        dtype=config.dtype,
        cache=config.cache,
        image_policy=config.image_policy(),
    )


register_judge_backend("openai", _openai)
register_judge_backend("transformers", _transformers)

__all__ = [
    "BUILTIN_BACKENDS",
    "ENTRY_POINT_GROUP",
    "get_judge_backend",
    "judge_backend_names",
    "register_judge_backend",
    "unregister_judge_backend",
]
