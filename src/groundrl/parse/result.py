"""The value every tolerant extractor returns: what was found, or why nothing was."""

from __future__ import annotations

from typing import Any, NamedTuple


class Parsed(NamedTuple):
    """``value`` is the extracted object (``None`` when nothing usable was found);
    ``error`` is a short human reason when ``value`` is ``None``, else ``""``."""

    value: Any
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


def fail(reason: str) -> Parsed:
    return Parsed(None, reason)
