"""EmbodiedBrain's Step-GRPO: guided precursors drawn each time a prompt is sampled.

The ``step_grpo:`` block of a train config (``{p: 0.5, seed: 0}``) makes
:class:`groundrl.train.trainer.GroundGRPOTrainer` draw, for every prompt group it is about
to generate (so anew at every sampling of the same prompt, not once at load), a hint:
with probability ``p`` a prefix of k gold steps, k uniform in 0 … T−1
(:func:`groundrl.curate.step_hints.step_hint`). All G completions of a group share the
hint (GRPO compares completions of one prompt).

EmbodiedBrain golds (a completion ``<response>…</response><plans>…</plans><actions>…</actions>``):
the hint is given "at the planning step level" [EmbodiedBrain §4.2.2, Fig. 4] — the
first k numbered ``<plans>`` lines as written (``1.[Navigate] go to the kitchen``; built
from the actions when the gold has no ``<plans>``) — and the policy is asked for its
complete answer starting with them. The record's ``gold`` stays whole, so the GRM's
reference keeps its ``<response>``, ``<plans>`` and ``<actions>`` and the rule rewards see
the full plan [ours: the paper does not say whether the hinted steps are re-written; we
keep one output format with and without hints].

Other golds — a list of steps (Reinforced Reasoning) or a Python-literal list: the prompt
gains the prefix as numbered "guided precursors" and ``gold`` becomes the remaining
steps, so the reward scores the completion of what is left. Records without a usable
gold are not hinted.

Logged per generation: ``step_grpo/hinted_frac`` (share of prompt groups whose prompt
carries at least one gold step) and ``step_grpo/hint_steps_mean`` (mean k over all
groups, 0 for an unhinted one).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from groundrl.curate.step_hints import hinted_prompt, step_hint
from groundrl.parse.structured import parse_literal_list
from groundrl.parse.tags import find_tag
from groundrl.settings import parse_settings


@dataclass(frozen=True)
class StepGRPOConfig:
    p: float = 0.5
    seed: int = 0

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | bool | None) -> StepGRPOConfig | None:
        """``None``/``false``: no hints; ``true``: the defaults; else the block's keys."""
        if raw is None or raw is False:
            return None
        return parse_settings(cls, {} if raw is True else raw, "step_grpo")

    def __post_init__(self) -> None:
        if not 0 <= self.p <= 1:
            raise ValueError(f"step_grpo.p (the hint probability) must be a number in [0, 1], got {self.p!r}")


def gold_steps(gold: Any) -> tuple[list[Any] | None, str | None]:
    """``(steps, wrapper)`` of a record's gold; ``(None, None)`` when it has no steps."""
    # lazy: parse.plans brings orjson; loaded only when this runs
    from groundrl.parse.plans import extract_actions

    if isinstance(gold, list):
        return (gold or None), None
    if isinstance(gold, str) and "<actions>" in gold:
        acts = extract_actions(gold)
        return ((acts.value or None), "actions") if acts.ok else (None, None)
    if isinstance(gold, str):
        lit = parse_literal_list(gold)
        return ((lit.value or None), None) if lit.ok else (None, None)
    return None, None


def _with_text(prompt: Any, fn: Any) -> Any:
    """Apply ``fn`` to the prompt text: a string, or the last text part of the last user
    message of a chat prompt."""
    if isinstance(prompt, str):
        return fn(prompt)
    msgs = [dict(m) for m in prompt]
    last = msgs[-1]
    content = last.get("content")
    if content is None or isinstance(content, str):  # a message without content has empty text
        last["content"] = fn(content or "")
        return msgs
    parts = [dict(c) for c in content]
    for c in reversed(parts):
        if c.get("type") == "text":
            c["text"] = fn(c.get("text") or "")
            break
    last["content"] = parts
    return msgs


_PLAN_STEP_RE = re.compile(r"(?m)^\s*\d+\.[^\n]*")  # one numbered <plans> line
PLAN_HINT_HEADER = (
    "The plan's first steps are given below. Write your complete answer (<response>, every plan step "
    "and every action), starting the plan with these steps:"
)


def plan_steps(gold: str, actions: list[Any]) -> list[str]:
    """The numbered ``<plans>`` lines of an EmbodiedBrain gold as written, or — without a
    usable ``<plans>`` — one ``i.[Action] objects`` line per action."""
    inner = find_tag(gold, "plans", strip=False)
    lines = [m.group(0).strip() for m in _PLAN_STEP_RE.finditer(inner)] if inner else []
    if lines:
        return lines
    out = []
    for i, a in enumerate(actions, 1):
        items = list(a) if isinstance(a, (list, tuple)) else [a]
        out.append(f"{i}.[{items[0] if items else ''}] {' '.join(str(x) for x in items[1:])}".rstrip())
    return out


def hint_record(rec: Mapping[str, Any], rng: random.Random, p: float) -> tuple[dict[str, Any], int | None]:
    """One Step-GRPO draw for one record: ``(record, k)`` with ``k`` the hinted steps
    (``None`` when no hint was drawn or the record has no gold steps)."""
    steps, wrap = gold_steps(rec.get("gold"))
    if not steps:
        return dict(rec), None
    if wrap:  # EmbodiedBrain: plan-step hints, the gold kept whole
        lines = plan_steps(rec["gold"], steps)
        prefix, _, hinted = step_hint(lines, rng, p)
        if not hinted:
            return dict(rec), None
        new = dict(rec)
        if prefix:
            hint = "\n".join([PLAN_HINT_HEADER, *prefix])
            new["prompt"] = _with_text(rec["prompt"], lambda text: f"{text}\n{hint}")
        return new, len(prefix)
    prefix, rest, hinted = step_hint(steps, rng, p)
    if not hinted:
        return dict(rec), None
    new = dict(rec)
    shown = [s if isinstance(s, str) else repr(s) for s in prefix]
    new["prompt"] = _with_text(rec["prompt"], lambda text: hinted_prompt(text, shown))
    new["gold"] = rest
    return new, len(prefix)


class StepHinter:
    """Draws hints group by group (see the module docstring); keeps the counts of the last
    call for logging."""

    def __init__(self, cfg: StepGRPOConfig) -> None:
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)

    def __call__(self, rows: list[dict[str, Any]], group_size: int) -> tuple[list[dict[str, Any]], list[int]]:
        """Rows (each prompt's G copies consecutive) → hinted rows and k per group (0
        when unhinted)."""
        out: list[dict[str, Any]] = []
        ks: list[int] = []
        for start in range(0, len(rows), group_size):
            new, k = hint_record(rows[start], self.rng, self.cfg.p)
            ks.append(k or 0)
            out.extend(dict(new) for _ in rows[start : start + group_size])
        return out, ks
