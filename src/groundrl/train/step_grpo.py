"""EmbodiedBrain's Step-GRPO: guided precursors drawn each time a prompt is sampled.

The ``step_grpo:`` block of a train config (``{p: 0.5, seed: 0}``) makes
:class:`groundrl.train.trainer.GroundGRPOTrainer` draw, for every prompt group it is about
to generate (so anew at every sampling of the same prompt, not once at load), a hint:
with probability ``p`` a prefix of k gold steps, k uniform in 0 … T−1
(:func:`groundrl.curate.step_hints.step_hint`). The prompt's text gains the prefix as
numbered "guided precursors" and the record's ``gold`` becomes the remaining steps, so
the reward scores the completion of what is left. All G completions of a group share the
hint (GRPO compares completions of one prompt).

``gold`` may be a list of steps (Reinforced Reasoning), a completion with
``<actions>[…]</actions>`` (EmbodiedBrain; the remaining steps are written back in the
same wrapper) or a Python-literal list; records without a usable gold are not hinted.

Logged per generation: ``step_grpo/hinted_frac`` (share of prompt groups whose prompt
carries at least one gold step) and ``step_grpo/hint_steps_mean`` (mean k over all
groups, 0 for an unhinted one).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from groundrl.curate.step_hints import hinted_prompt, step_hint


@dataclass(frozen=True)
class StepGRPOConfig:
    p: float = 0.5
    seed: int = 0

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | bool | None) -> StepGRPOConfig | None:
        if raw is None or raw is False:
            return None
        if raw is True:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ValueError("step_grpo must be a mapping, e.g. {p: 0.5, seed: 0}")
        unknown = set(raw) - {"p", "seed"}
        if unknown:
            raise ValueError(f"step_grpo: unknown key(s) {sorted(unknown)}; allowed: p, seed")
        cfg = cls(**raw)
        if isinstance(cfg.p, bool) or not isinstance(cfg.p, (int, float)) or not 0 <= cfg.p <= 1:
            raise ValueError(f"step_grpo.p (the hint probability) must be a number in [0, 1], got {cfg.p!r}")
        if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, int):
            raise ValueError(f"step_grpo.seed must be an int, got {cfg.seed!r}")
        return cfg


def gold_steps(gold: Any) -> tuple[list[Any] | None, str | None]:
    """``(steps, wrapper)`` of a record's gold; ``(None, None)`` when it has no steps."""
    from groundrl.parse.plans import extract_actions
    from groundrl.parse.structured import parse_literal_list

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
    if isinstance(content, str):
        last["content"] = fn(content)
        return msgs
    parts = [dict(c) for c in content]
    for c in reversed(parts):
        if c.get("type") == "text":
            c["text"] = fn(c.get("text") or "")
            break
    last["content"] = parts
    return msgs


def hint_record(rec: Mapping[str, Any], rng: random.Random, p: float) -> tuple[dict[str, Any], int | None]:
    """One Step-GRPO draw for one record: ``(record, k)`` with ``k`` the hinted steps
    (``None`` when no hint was drawn or the record has no gold steps)."""
    steps, wrap = gold_steps(rec.get("gold"))
    if not steps:
        return dict(rec), None
    prefix, rest, hinted = step_hint(steps, rng, p)
    if not hinted:
        return dict(rec), None
    new = dict(rec)
    shown = [s if isinstance(s, str) else repr(s) for s in prefix]
    new["prompt"] = _with_text(rec["prompt"], lambda text: hinted_prompt(text, shown))
    new["gold"] = f"<actions>{rest!r}</actions>" if wrap else rest
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
