"""Provenance for ``groundrl train --print-config``: each value's comment in the config
file (``key: value  # [paper §N] …`` / ``[ours: why]``) by its dotted path, and the
objective settings a stage leaves to TRL's defaults (issue 37 item 2).

Paths are ``judge.temperature`` at the top level and ``stages.<name>.<block>.<key>``
inside a stage. Read line by line from the file's text (YAML keeps no comments);
linear in the file's size."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# Settings that change the optimised objective: each GRPO-kind stage should state them.
OBJECTIVE_KEYS = ("loss_type", "beta", "use_bias_correction_kl", "vllm_importance_sampling_correction")
JUDGE_KEYS = ("temperature", "max_tokens")
_LINE_RE = re.compile(r"^(\s*)(- )?([A-Za-z_][\w-]*):(?:\s*([^#\n]*?))?\s*(?:#\s*(.*))?$")


def comments(text: str) -> dict[str, tuple[str, str]]:
    """``{dotted path: (value text, comment)}`` for every ``key: value`` line."""
    out: dict[str, tuple[str, str]] = {}
    stack: list[tuple[int, str]] = []  # (indent, path component)
    for line in text.splitlines():
        m = _LINE_RE.match(line)
        if m is None or line.lstrip().startswith("#"):
            continue
        indent = len(m.group(1)) + (2 if m.group(2) else 0)
        key, value, note = m.group(3), (m.group(4) or "").strip(), (m.group(5) or "").strip()
        level = len(m.group(1)) if m.group(2) else indent  # a new list item closes the last one
        while stack and stack[-1][0] >= level:
            stack.pop()
        if m.group(2) and key == "name":  # a list item named by its first key: a stage
            stack.append((len(m.group(1)), value))  # its keys sit deeper than the dash
            continue
        path = ".".join([p for _, p in stack] + [key])
        if value:
            out[path] = (value, note)
        elif note:
            out[path] = ("", note)
        stack.append((indent, key))
    return out


def provenance_lines(text: str, effective: Mapping[str, Any]) -> list[str]:
    """Comment lines for --print-config: the objective and judge-sampling settings with
    their provenance, and any such setting left to a default (named as such)."""
    notes = comments(text)
    lines = ["# provenance of the objective and judge-sampling settings (from the file's comments):"]

    def show(path: str, value: Any) -> None:
        given = notes.get(path)
        if given is not None:
            lines.append(f"#   {path}: {given[0]}  # {given[1] or 'NO LABEL'}")
        else:
            lines.append(f"#   {path}: {value}  # not in the file: the default")

    judge = effective.get("judge") if isinstance(effective.get("judge"), dict) else None
    if judge is not None or any(k.startswith("judge.") for k in notes):
        for k in JUDGE_KEYS:
            show(f"judge.{k}", (judge or {}).get(k, "the judge default"))
    for st in effective.get("stages", []):
        args = st.get("args") or {}
        if "beta" not in args:
            continue  # not a GRPO-kind stage
        block = _block_of(notes, st["name"])
        for k in OBJECTIVE_KEYS:
            path = f"stages.{st['name']}.{block}.{k}" if block else f"stages.{st['name']}.{k}"
            if k.startswith("vllm_") and not args.get("use_vllm") and path not in notes:
                lines.append(f"#   {path}: {args.get(k)}  # use_vllm is off: not applied")
                continue
            show(path, args.get(k))
    return lines


def _block_of(notes: dict[str, tuple[str, str]], stage: str) -> str | None:
    """The stage's trainer block name in the file (``grpo``, ``cgrpo`` …), from its keys."""
    for path in notes:
        parts = path.split(".")
        if len(parts) >= 4 and parts[0] == "stages" and parts[1] == stage and parts[3] == "beta":
            return parts[2]
    return None
