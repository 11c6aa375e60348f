"""Proxy-GRM: ``<rubric>…</rubric><eval>…</eval><answer>1|2</answer>`` pairwise verdicts.

``total = accuracy + 0.5·format (+ proxy)``: accuracy is ±1 against ``preferred``,
format 0/1 (:mod:`groundrl.rewards.preference`). The proxy part (±1, 0 when the proxy
call fails) needs a proxy-agent judge; without one it is absent and the reason says so.
"""

from __future__ import annotations

from typing import Any

from groundrl.examples import bundled
from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option
from groundrl.rewards.preference import proxy_accuracy, proxy_format
from groundrl.rubric import Part, Rubric


def _judge(backend: Any, sampling: Any) -> Any:
    # lazy: the papers' judges bring numpy and orjson; only a judged rubric needs them
    from groundrl.judges.papers import ProxyAgent

    return ProxyAgent(backend, sampling)


def build(judge: Any = None) -> Rubric:
    parts = [
        Part("accuracy", proxy_accuracy, value_range=(-1.0, 1.0)),
        Part("format", proxy_format, weight=0.5, value_range=(0.0, 1.0)),
    ]
    if judge is not None:
        parts.append(judge.as_part("proxy", weight=1.0))
    return Rubric(parts, name="proxy_grm")


RECIPE = Recipe(
    name="proxy_grm",
    paper="Proxy-GRM",
    summary="rubric/eval/answer pairwise verdict: accuracy ±1 + 0.5·format (+ proxy agent ±1 with a judge)",
    build=build,
    required=("preferred",),
    optional=("query", "response_1", "response_2", "image"),
    label_field="preferred",
    options=(Option("judge", "judge", None, "proxy agent: adds part proxy (±1, 0 when the call fails)"),),
    judge_factory=_judge,
    judge_parts=("proxy",),
    examples=bundled("proxy_grm"),
    gold_example="pg-right",
)
