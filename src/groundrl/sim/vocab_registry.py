"""The vocabulary registry: every simulator surface (environment, ``execute``,
``sim_reward``, the evaluation loop, ``render_plan``) looks vocabularies up here by name,
and :func:`detect_vocab` asks them in ``detect_order`` which one wrote a step. The five
built-ins (:mod:`groundrl.sim.vocabularies`) are registered on import; installed
packages add theirs through the ``groundrl.vocabularies`` entry-point group.
"""

from __future__ import annotations

import logging
from typing import Any

from groundrl.registry import Registry
from groundrl.sim.vocabularies import EbAlfred, EbAlfredJson, EmbodiedBrain, HighPddl, Reinforced, Vocabulary

#: The built-in vocabularies' names (:func:`vocab_names` also lists registered ones).
VOCABS = ("eb_alfred", "eb_alfred_json", "reinforced", "embodied_brain", "high_pddl")
ENTRY_POINT_GROUP = "groundrl.vocabularies"

log = logging.getLogger("groundrl.sim")


def _check(name: str, vocab: object) -> None:
    if name == "auto":
        raise ValueError("'auto' is reserved: it means 'detect the vocabulary'")


#: The vocabulary registry (:class:`groundrl.registry.Registry`); the functions below
#: are its long-standing names.
VOCABULARIES: Registry[Vocabulary] = Registry(
    "vocabulary",
    group=ENTRY_POINT_GROUP,
    name_of=lambda v: v.name,
    check=_check,
    item_type=Vocabulary,
    log=log,
)


def register_vocabulary(vocab: Vocabulary, *, replace: bool = False) -> Vocabulary:
    """Add ``vocab`` to the registry under ``vocab.name``; returns it. Every simulator
    surface (environment, ``execute``, ``sim_reward``, the evaluation loop,
    ``render_plan``) looks vocabularies up here. The rules of every registry
    (:mod:`groundrl.registry`): a built-in name raises, another vocabulary under a taken
    name raises unless ``replace=True``, the same object again is a no-op."""
    if not isinstance(vocab, Vocabulary) or not vocab.name:
        raise TypeError("register_vocabulary takes a named Vocabulary instance")
    return VOCABULARIES.register(vocab, replace=replace)


def unregister_vocabulary(name: str) -> None:
    """Remove a registered vocabulary (a built-in cannot be removed)."""
    VOCABULARIES.unregister(name)


def vocab_names() -> tuple[str, ...]:
    """Every registered vocabulary's name (the built-ins first, in :data:`VOCABS` order)."""
    return tuple(VOCABULARIES.names())


def get_vocab(name: str) -> Vocabulary:
    """The registered vocabulary called ``name``; ``ValueError`` naming the closest and
    the choices."""
    return VOCABULARIES.get(name)


def find_vocab(name: object) -> Vocabulary | None:
    """The registered vocabulary called ``name``, or ``None`` (never raises)."""
    return VOCABULARIES.get(name) if isinstance(name, str) and name in VOCABULARIES else None


def opens_containers(vocab: str | None) -> bool:
    """Whether plans in ``vocab`` run with containers opening themselves (a vocabulary
    without open / close); ``False`` for ``None`` or an unknown name."""
    v = find_vocab(vocab)
    return bool(v and v.auto_open)


for _v in (EbAlfred(), EbAlfredJson(), Reinforced(), EmbodiedBrain(), HighPddl()):
    VOCABULARIES.builtin(_v)
del _v

_ordered: tuple[int, list[Vocabulary]] = (-1, [])


def in_detect_order() -> list[Vocabulary]:
    """Every registered vocabulary, lowest ``detect_order`` first (cached per change)."""
    global _ordered
    VOCABULARIES.load_plugins()  # plugins join the detection order
    if _ordered[0] != VOCABULARIES.version:
        vocabs = sorted((v for _, v in VOCABULARIES.items()), key=lambda v: v.detect_order)
        _ordered = (VOCABULARIES.version, vocabs)
    return _ordered[1]


def detect_vocab(step: Any) -> str | None:
    """The vocabulary one raw step is written in (registered vocabularies asked in
    ``detect_order``), or ``None``."""
    for v in in_detect_order():
        if v.detect(step):
            return v.name
    return None


__all__ = [
    "ENTRY_POINT_GROUP",
    "VOCABS",
    "VOCABULARIES",
    "detect_vocab",
    "find_vocab",
    "get_vocab",
    "in_detect_order",
    "opens_containers",
    "register_vocabulary",
    "unregister_vocabulary",
    "vocab_names",
]
