"""The judge-backend registry: the names ``JudgeConfig.backend`` (``--judge-backend``, a
train file's ``judge: {backend: …}``, ``GROUNDRL_JUDGE_BACKEND``) may take.

A backend is registered as a *maker*: a callable taking the
:class:`~groundrl.judges.config.JudgeConfig` and returning a
:class:`~groundrl.judges.base.JudgeBackend`, which is what a backend class whose
constructor takes the config is. The built-ins (``openai``, ``transformers``) are
registered below through :func:`register_judge_backend`, as a plugin registers its own;
``@register_judge_backend("name")`` decorates a backend class; installed packages add
theirs through the ``groundrl.judges`` entry-point group, each entry point naming the
maker (or a module that registers its own on import):

    [project.entry-points."groundrl.judges"]
    my_judge = "my_package.judge:MyBackend"

The registry's rules are every registry's (:mod:`groundrl.registry`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from groundrl.registry import Registry

log = logging.getLogger("groundrl.judges")
ENTRY_POINT_GROUP = "groundrl.judges"
BUILTIN_BACKENDS = ("openai", "transformers")
Maker = Callable[[Any], Any]


def _check(name: str, maker: object) -> None:
    if not isinstance(name, str) or not name.replace("_", "a").replace("-", "a").isalnum():
        raise ValueError(f"judge backend name {name!r}: use letters, digits, '_' and '-'")
    if not callable(maker):
        raise TypeError(f"judge backend {name!r}: register a class or function taking the JudgeConfig")


def _from_plugin(_name: str, obj: object) -> Maker | None:
    """An entry point names the maker, or a module that registers its own on import."""
    if isinstance(obj, type(os)):
        return None
    if not callable(obj):
        raise TypeError(f"it gave {type(obj).__name__}, expected a class or function taking the JudgeConfig")
    return obj


#: The judge-backend registry (:class:`groundrl.registry.Registry`), keyed by the name
#: given at registration; the functions below are its long-standing names.
JUDGE_BACKENDS: Registry[Maker] = Registry(
    "judge backend", group=ENTRY_POINT_GROUP, check=_check, from_plugin=_from_plugin, log=log
)


def register_judge_backend(name: str, maker: Maker | None = None, *, replace: bool = False) -> Any:
    """Let ``JudgeConfig(backend=name, …)`` build its backend with ``maker(config)``;
    returns ``maker``. Without ``maker`` it is a decorator::

        @register_judge_backend("mine")
        class MyBackend(JudgeBackend): ...
    """
    if maker is None:
        return lambda m: register_judge_backend(name, m, replace=replace)
    return JUDGE_BACKENDS.register(name, maker, replace=replace)


def unregister_judge_backend(name: str) -> None:
    """Forget a registered judge backend (tests, notebooks); a built-in raises."""
    JUDGE_BACKENDS.unregister(name)


def judge_backend_names() -> tuple[str, ...]:
    """Every registered backend name: the built-ins first, then plugins."""
    return tuple(JUDGE_BACKENDS.names())


def get_judge_backend(name: str) -> Maker:
    """The maker registered as ``name``; ``ValueError`` naming the closest and the
    names there are."""
    return JUDGE_BACKENDS.get(name)


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


JUDGE_BACKENDS.builtin("openai", _openai)
JUDGE_BACKENDS.builtin("transformers", _transformers)

__all__ = [
    "BUILTIN_BACKENDS",
    "ENTRY_POINT_GROUP",
    "JUDGE_BACKENDS",
    "get_judge_backend",
    "judge_backend_names",
    "register_judge_backend",
    "unregister_judge_backend",
]
