"""``--field OURS=THEIRS`` on ``score`` and ``curate``: read the input's field THEIRS as
our field OURS, so a vLLM dump's ``output`` scores as ``completion`` without renaming
files by hand (issue 39 item 5). The record keeps its own THEIRS too; in a record
without THEIRS, OURS is missing (its own OURS, if any, is not read), and the command
reports it as a missing field like any other."""

from __future__ import annotations

import atexit
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer

from groundrl.io import rename_fields

FIELD_HELP = (
    "Read the input's field THEIRS as our field OURS: --field completion=output (repeatable; "
    "`groundrl recipes` lists our names)."
)


def field_option() -> Any:
    """The ``--field`` option (eager: parsed before INPUT, whose callback may use it)."""
    return typer.Option(
        [], "--field", metavar="OURS=THEIRS", help=FIELD_HELP, is_eager=True, callback=_parse_callback
    )


def _parse_callback(values: list[str] | None) -> list[str]:
    parse_fields(values)  # a bad mapping is a usage error before any work
    return list(values or [])


def parse_fields(values: Sequence[str] | None) -> dict[str, str]:
    """``["completion=output", …]`` → ``{"completion": "output"}``; a malformed or
    contradictory entry raises :class:`typer.BadParameter` saying what to write.

    >>> parse_fields(["completion=output", "gt_score = label"])
    {'completion': 'output', 'gt_score': 'label'}
    """
    out: dict[str, str] = {}
    for value in values or ():
        ours, sep, theirs = (s.strip() for s in value.partition("="))
        if not sep or not ours or not theirs:
            raise typer.BadParameter(
                f"{value!r}: write OURS=THEIRS, e.g. completion=output", param_hint="--field"
            )
        if out.get(ours, theirs) != theirs:
            raise typer.BadParameter(
                f"{ours!r} is read from both {out[ours]!r} and {theirs!r}: keep one", param_hint="--field"
            )
        out[ours] = theirs
    return out


rename = rename_fields  # the one implementation, shared with the reward server


def rename_items(
    items: Iterable[tuple[int, dict[str, Any] | None, str]], fields: Mapping[str, str]
) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """:func:`groundrl.scoring.iter_jsonl_lines` items with their records renamed; a
    record that lacks a mapped field becomes an error naming it and the flag."""
    for line, rec, err in items:
        if rec is None or err or not fields:
            yield line, rec, err
            continue
        renamed, missing = rename(rec, fields)
        if missing:
            ours = next(o for o, t in fields.items() if t == missing)
            err = f"line {line}: missing field {missing!r} (read as {ours!r} by --field {ours}={missing})"
        yield line, renamed, err


def renamed_copy(path: Path, fields: Mapping[str, str]) -> Path:
    """A temporary copy of the JSONL file ``path`` (deleted at exit) with each object
    line renamed; every other line is copied as it is, so line numbers and the errors
    about bad lines stay those of ``path``. One pass, one line in memory at a time."""
    with (
        path.open("rb") as src,
        tempfile.NamedTemporaryFile("wb", prefix="groundrl-fields-", suffix=".jsonl", delete=False) as dst,
    ):
        atexit.register(Path(dst.name).unlink, missing_ok=True)
        for raw in src:
            dst.write(_renamed_line(raw, fields))
    return Path(dst.name)


def _renamed_line(raw: bytes, fields: Mapping[str, str]) -> bytes:
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return raw  # the command reports the bad line as usual
    if not isinstance(rec, dict):
        return raw
    end = b"\n" if raw.endswith(b"\n") else b""
    # ASCII escapes: a lone surrogate (valid in JSON text) cannot be encoded as UTF-8
    return json.dumps(rename(rec, fields)[0]).encode("ascii") + end
