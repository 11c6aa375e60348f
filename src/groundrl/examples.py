"""The example files bundled with the package (one JSONL per recipe, a small action map)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from groundrl.io import read_jsonl


def examples_dir() -> Path:
    return Path(str(resources.files("groundrl") / "data" / "examples"))


def example_file(recipe: str) -> Path:
    path = examples_dir() / f"{recipe}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no bundled example for recipe {recipe!r} at {path}")
    return path


def example_action_map() -> Path:
    return examples_dir() / "action_map.json"


def bundled(recipe: str) -> Callable[[], list[dict[str, Any]]]:
    """A loader of a recipe's bundled example file, for ``Recipe(examples=...)``."""

    def load() -> list[dict[str, Any]]:
        return read_jsonl(example_file(recipe))

    load.__name__ = f"bundled_{recipe}_examples"
    return load
