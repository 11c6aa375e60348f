"""The one settings parser (groundrl.settings): keys, types and defaults from the fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from groundrl.settings import SettingsError, parse_settings


@dataclass(frozen=True)
class Inner:
    on: bool = False


@dataclass(frozen=True)
class Block:
    every: int
    lr: float = 0.5
    mode: Literal["a", "b"] = "a"
    limit: int | None = None
    names: tuple[str, ...] = ()
    tags: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    inner: Inner = field(default_factory=Inner)
    anything: Any = None

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError(f"blk.every must be ≥ 1, got {self.every}")


def test_defaults_and_conversions_come_from_the_fields() -> None:
    got = parse_settings(Block, {"every": 2, "lr": 1, "names": ["x"], "inner": {"on": True}}, "blk")
    assert got == Block(every=2, lr=1.0, names=("x",), inner=Inner(on=True))
    assert isinstance(got.lr, float) and isinstance(got.names, tuple)
    assert parse_settings(Block, got, "blk") is got  # parsed once: a typed block passes through


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (
            {"every": 1, "evry": 2},
            ["blk: unknown key 'evry'", "(did you mean 'every'?); allowed: every, lr, mode"],
        ),
        ({"every": True}, ["blk.every must be an integer, got True"]),
        ({"every": 1, "lr": "fast"}, ["blk.lr must be a number"]),
        ({"every": 1, "lr": float("nan")}, ["blk.lr must be a number"]),
        ({"every": 1, "mode": "c"}, ["blk.mode must be one of 'a', 'b'"]),
        ({"every": 1, "limit": "3"}, ["blk.limit must be an integer or null"]),
        ({"every": 1, "names": "x"}, ["blk.names must be a list"]),
        ({"every": 1, "tags": ["x", 2]}, ["blk.tags[1] must be a string"]),
        ({"every": 1, "extra": [1]}, ["blk.extra must be a mapping"]),
        ({"every": 1, "inner": {"onn": True}}, ["blk.inner: unknown key 'onn'", "did you mean 'on'?"]),
        ({"every": 1, "inner": {"on": 1}}, ["blk.inner.on must be true or false"]),
        ({}, ["blk.every is required"]),
        ({"every": 0}, ["blk.every must be ≥ 1"]),
        ([1], ["blk must be a mapping of every, lr"]),
    ],
)
def test_a_bad_block_names_the_key_and_what_is_allowed(raw: Any, words: list[str]) -> None:
    with pytest.raises(SettingsError) as e:
        parse_settings(Block, raw, "blk")
    for w in words:
        assert w in str(e.value)
    assert isinstance(e.value, ValueError)  # callers that catch ValueError keep working
