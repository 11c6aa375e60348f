"""The parameters a resumable output was made with, kept beside it.

A resumable command (``groundrl curate …``) skips the records already in its output. If
the user reruns it with another parameter (``rejective --tau 0.5`` over an output made
with ``--tau 2``), resuming would keep the old results and print "0 written (1 already
done)" — a silent surprise. So the first run writes ``OUTPUT.params.json`` (the command
and the flags that change what a record becomes), and a later run over the same output
compares: the same parameters resume, other ones are refused with a message naming
each changed flag and ``--restart`` (which deletes the output and starts over).

An output from before this file existed has no parameters file: it resumes, with a
note, and the parameters of the run are written from then on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SUFFIX = ".params.json"
RESTART_FLAG = "--restart"


class ParamsChanged(ValueError):
    """A rerun over an output made with other parameters."""


def params_path(output: Path) -> Path:
    return output.with_name(output.name + SUFFIX)


def _plain(v: Any) -> Any:
    """JSON-comparable: numbers as they are, paths and other objects as text."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return str(v)


def _has_records(output: Path) -> bool:
    return output.is_file() and output.stat().st_size > 0


def _describe(v: Any) -> str:
    return "(unset)" if v is None else json.dumps(v)


def guard(output: Path, command: str, params: Mapping[str, Any], restart: bool = False) -> str | None:
    """Before a resumable run: refuse when ``output`` was made with other parameters
    (:class:`ParamsChanged`), else record them. ``restart`` deletes ``output`` (and its
    parameters file) first. Returns a note to print, or ``None``."""
    want = {"command": command, **{k: _plain(v) for k, v in params.items()}}
    pp = params_path(output)
    if restart:
        output.unlink(missing_ok=True)
        pp.unlink(missing_ok=True)
    note = None
    if _has_records(output):
        try:
            had = json.loads(pp.read_text(encoding="utf-8")) if pp.is_file() else None
        except (OSError, ValueError):
            had = None
        if not isinstance(had, dict):
            note = (
                f"note: {output} has no readable record of the parameters it was made with; "
                f"resuming as if they were these (now written to {pp.name})"
            )
        else:
            changed = [k for k in sorted(set(had) | set(want)) if had.get(k) != want.get(k)]
            if changed:
                what = "; ".join(
                    f"{k} was {_describe(had.get(k))}, now {_describe(want.get(k))}" for k in changed
                )
                raise ParamsChanged(
                    f"{output} was made with other parameters ({what}); resuming would keep the old "
                    f"results. Pass {RESTART_FLAG} to delete it and start over, or write to another -o file."
                )
            return None
    output.parent.mkdir(parents=True, exist_ok=True)
    pp.write_text(json.dumps(want, indent=1) + "\n", encoding="utf-8")
    return note


__all__ = ["RESTART_FLAG", "SUFFIX", "ParamsChanged", "guard", "params_path"]
