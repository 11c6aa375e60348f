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

A backend may declare its own settings: a dataclass (``settings=`` or the class's
``Settings`` attribute) that the judge block's ``options`` mapping (``--judge-options``
as JSON) is parsed into when the :class:`~groundrl.judges.config.JudgeConfig` is built, so
a misspelt option fails at load naming the allowed ones.

The registry's rules are every registry's (:mod:`groundrl.registry`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from groundrl.registry import Registry
from groundrl.settings import parse_settings

log = logging.getLogger("groundrl.judges")
ENTRY_POINT_GROUP = "groundrl.judges"
BUILTIN_BACKENDS = ("openai", "transformers")
Maker = Callable[[Any], Any]


def _check(name: str, maker: object) -> None:
    if not isinstance(name, str) or not name.replace("_", "a").replace("-", "a").isalnum():
        raise ValueError(f"judge backend name {name!r}: use letters, digits, '_' and '-'")
    if not callable(maker):
        raise TypeError(f"judge backend {name!r}: register a class or function taking the JudgeConfig")


def _from_plugin(name: str, obj: object) -> Maker | None:
    """An entry point names the maker, or a module that registers its own on import."""
    if isinstance(obj, type(os)):
        return None
    if not callable(obj):
        raise TypeError(f"it gave {type(obj).__name__}, expected a class or function taking the JudgeConfig")
    settings = getattr(obj, "Settings", None)
    if isinstance(settings, type) and dataclasses.is_dataclass(settings):
        _SETTINGS[name] = settings  # a plugin declares its settings on the class
    return obj


#: The judge-backend registry (:class:`groundrl.registry.Registry`), keyed by the name
#: given at registration; the functions below are its long-standing names.
JUDGE_BACKENDS: Registry[Maker] = Registry(
    "judge backend", group=ENTRY_POINT_GROUP, check=_check, from_plugin=_from_plugin, log=log
)


_SETTINGS: dict[str, type] = {}  # name -> the backend's own settings dataclass


def register_judge_backend(
    name: str, maker: Maker | None = None, *, settings: type | None = None, replace: bool = False
) -> Any:
    """Let ``JudgeConfig(backend=name, …)`` build its backend with ``maker(config)``;
    returns ``maker``. ``settings`` is the backend's own settings dataclass (default: the
    maker's ``Settings`` attribute, when it is a dataclass), which ``JudgeConfig.options``
    is parsed into at load (:func:`backend_options`). Without ``maker`` it is a
    decorator::

        @register_judge_backend("mine")
        class MyBackend(JudgeBackend): ...
    """
    if maker is None:
        return lambda m: register_judge_backend(name, m, settings=settings, replace=replace)
    settings = settings if settings is not None else getattr(maker, "Settings", None)
    if settings is not None and not (isinstance(settings, type) and dataclasses.is_dataclass(settings)):
        raise TypeError(f"judge backend {name!r}: settings must be a dataclass, got {settings!r}")
    out = JUDGE_BACKENDS.register(name, maker, replace=replace)
    if settings is not None:
        _SETTINGS[name] = settings
    else:
        _SETTINGS.pop(name, None)
    return out


def judge_backend_settings(name: str) -> type | None:
    """The settings dataclass the backend registered as ``name`` declared, or ``None``."""
    get_judge_backend(name)  # an unknown name raises; a plugin's maker is loaded first
    return _SETTINGS.get(name)


def backend_options(name: str, raw: Mapping[str, Any] | None) -> Any:
    """``raw`` (a judge block's ``options``) parsed into the settings dataclass of backend
    ``name`` (unknown key → did-you-mean, types from the fields); ``None`` when the backend
    declares none and ``raw`` is empty. Options for a backend without settings raise."""
    cls = judge_backend_settings(name)
    if cls is None:
        if raw:
            raise ValueError(f"judge backend {name!r} declares no settings; remove options {sorted(raw)}")
        return None
    return parse_settings(cls, raw, f"judge options ({name})")


def unregister_judge_backend(name: str) -> None:
    """Forget a registered judge backend (tests, notebooks); a built-in raises."""
    JUDGE_BACKENDS.unregister(name)
    _SETTINGS.pop(name, None)


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
    "backend_options",
    "get_judge_backend",
    "judge_backend_settings",
    "judge_backend_names",
    "register_judge_backend",
    "unregister_judge_backend",
]
