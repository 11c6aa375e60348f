"""groundrl: verifiable rewards, generative reward models and RL post-training for
embodied vision-language agents.

The public API is importable from the top level without importing torch::

    from groundrl import Rubric, Part, Score, Verdict, Recipe, Option, get_recipe, register

Training and local judges live behind the ``train`` extra and are imported lazily.
Diagnostics go to the standard ``logging`` module, one logger per area:
``groundrl.judges``, ``groundrl.serve``, ``groundrl.curate``, ``groundrl.train``,
``groundrl.sim``, ``groundrl.recipes``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_WHERE = {
    "Score": "groundrl.types",
    "Verdict": "groundrl.types",
    "Part": "groundrl.rubric",
    "Rubric": "groundrl.rubric",
    "Recipe": "groundrl.recipes",
    "Option": "groundrl.recipes",
    "OptionError": "groundrl.recipes",
    "get_recipe": "groundrl.recipes",
    "recipe_names": "groundrl.recipes",
    "register": "groundrl.recipes",
    "JudgeConfig": "groundrl.judges.config",
}
__all__ = [*sorted(_WHERE), "__version__"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'groundrl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
