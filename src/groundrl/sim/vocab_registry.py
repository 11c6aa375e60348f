"""The vocabulary registry: every simulator surface (environment, ``execute``,
``sim_reward``, the evaluation loop, ``render_plan``) looks vocabularies up here by name,
and :func:`detect_vocab` asks them in ``detect_order`` which one wrote a step. The five
built-ins (:mod:`groundrl.sim.vocabularies`) are registered on import; installed
packages add theirs through the ``groundrl.vocabularies`` entry-point group.
"""

from __future__ import annotations

import logging
from typing import Any

from groundrl.registry import admit, check_removable, load_entry_points
from groundrl.sim.vocabularies import EbAlfred, EbAlfredJson, EmbodiedBrain, HighPddl, Reinforced, Vocabulary

#: The built-in vocabularies' names (:func:`vocab_names` also lists registered ones).
VOCABS = ("eb_alfred", "eb_alfred_json", "reinforced", "embodied_brain", "high_pddl")

log = logging.getLogger("groundrl.sim")
_REGISTRY: dict[str, Vocabulary] = {}


def register_vocabulary(vocab: Vocabulary, *, replace: bool = False) -> Vocabulary:
    """Add ``vocab`` to the registry under ``vocab.name``; returns it. Every simulator
    surface (environment, ``execute``, ``sim_reward``, the evaluation loop,
    ``render_plan``) looks vocabularies up here. The rules of every registry
    (:mod:`groundrl.registry`): a built-in name raises, another vocabulary under a taken
    name raises unless ``replace=True``, the same object again is a no-op."""
    if not isinstance(vocab, Vocabulary) or not vocab.name:
        raise TypeError("register_vocabulary takes a named Vocabulary instance")
    if vocab.name == "auto":
        raise ValueError("'auto' is reserved: it means 'detect the vocabulary'")
    current = _REGISTRY.get(vocab.name)
    if not admit("vocabulary", vocab.name, vocab, current, builtin=vocab.name in VOCABS, replace=replace):
        return vocab
    _REGISTRY[vocab.name] = vocab
    _DETECT_ORDER[:] = sorted(_REGISTRY.values(), key=lambda v: v.detect_order)
    return vocab


_DETECT_ORDER: list[Vocabulary] = []


def unregister_vocabulary(name: str) -> None:
    """Remove a registered vocabulary (a built-in cannot be removed)."""
    check_removable("vocabulary", name, builtin=name in VOCABS)
    _REGISTRY.pop(name, None)
    _DETECT_ORDER[:] = sorted(_REGISTRY.values(), key=lambda v: v.detect_order)


ENTRY_POINT_GROUP = "groundrl.vocabularies"
_plugins_loaded = False


def _registry() -> dict[str, Vocabulary]:
    """The registry, with the vocabularies of installed packages added on first use: each
    entry point of the ``groundrl.vocabularies`` group names a :class:`Vocabulary` object
    (registered here) or a module that registers its own on import."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        load_entry_points(ENTRY_POINT_GROUP, "vocabulary", _accept_plugin, log)
    return _REGISTRY


def _accept_plugin(_name: str, obj: object) -> None:
    if isinstance(obj, Vocabulary) and obj.name not in _REGISTRY:
        register_vocabulary(obj)


def vocab_names() -> tuple[str, ...]:
    """Every registered vocabulary's name (the built-ins first, in :data:`VOCABS` order)."""
    return tuple(_registry())


def get_vocab(name: str) -> Vocabulary:
    """The registered vocabulary called ``name``; ``ValueError`` naming the choices."""
    try:
        return _registry()[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown vocabulary {name!r}; choose one of {vocab_names()}") from None


def opens_containers(vocab: str | None) -> bool:
    """Whether plans in ``vocab`` run with containers opening themselves (a vocabulary
    without open / close); ``False`` for ``None`` or an unknown name."""
    v = _registry().get(vocab) if isinstance(vocab, str) else None
    return bool(v and v.auto_open)


for _v in (EbAlfred(), EbAlfredJson(), Reinforced(), EmbodiedBrain(), HighPddl()):
    register_vocabulary(_v)
del _v


def detect_vocab(step: Any) -> str | None:
    """The vocabulary one raw step is written in (registered vocabularies asked in
    ``detect_order``), or ``None``."""
    _registry()  # plugins join the detection order
    for v in _DETECT_ORDER:
        if v.detect(step):
            return v.name
    return None


__all__ = [
    "ENTRY_POINT_GROUP",
    "VOCABS",
    "detect_vocab",
    "get_vocab",
    "opens_containers",
    "register_vocabulary",
    "unregister_vocabulary",
    "vocab_names",
]
