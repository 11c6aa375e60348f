"""Score a dataset on Ray: :func:`score_dataset` maps a recipe's rubric over a Ray Data
``Dataset`` with ``map_batches`` (an actor pool of ``concurrency`` actors, each building the
rubric once where it runs: judges are never pickled).

    import ray
    from groundrl.integrations.ray_data import score_dataset
    ds = ray.data.read_json("samples.jsonl")
    scored, rows_per_s = score_dataset(ds, "reinforced_planning", options={"action_map": "map.json"})

Each row gains ``reward`` and one ``part/<name>`` column per part (``None`` where a part
does not apply). Ray is imported only when called.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TypedDict

from groundrl.integrations.verl import plain
from groundrl.recipes import get_recipe
from groundrl.recipes.resolve import resolve_rubric
from groundrl.scoring import json_text, parse_jsonl_line, score_records


class _Scorer:
    def __init__(self, recipe: str, options: Mapping[str, Any], judge: Any, completion_key: str) -> None:
        self.rubric = resolve_rubric(recipe, dict(options), judge)
        self.key = completion_key

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, object]:
        """Ray's numpy batch (one array per column) with ``reward`` and ``part/<name>``."""
        cols = {k: plain(list(v)) for k, v in batch.items()}
        n = len(cols[self.key])
        samples = [{k: v[i] for k, v in cols.items() if k != self.key} for i in range(n)]
        verdicts = self.rubric.score_batch(cols[self.key], samples)
        out = dict(batch)
        out["reward"] = [v.total for v in verdicts]
        for name in self.rubric.names:
            out[f"part/{name}"] = [(v.parts[name].value if name in v.parts else None) for v in verdicts]
        return out


def score_dataset(
    ds: Any,
    recipe: str,
    *,
    options: Mapping[str, Any] | None = None,
    judge: Any = None,
    completion_key: str = "completion",
    batch_size: int = 1024,
    concurrency: int = 2,
    materialize: bool = True,
) -> tuple[Any, float | None]:
    """``(scored dataset, rows/s)``: ``ds.map_batches`` with the recipe's rubric;
    ``materialize`` runs it now and measures throughput (``None`` otherwise)."""
    _Scorer(recipe, options or {}, judge, completion_key).rubric.close()  # configuration errors here
    # a pool of ``concurrency`` actors, each building the rubric (and any judge) once
    scored = ds.map_batches(
        _Scorer,
        fn_constructor_args=(recipe, dict(options or {}), judge, completion_key),
        batch_size=batch_size,
        batch_format="numpy",
        concurrency=concurrency,
    )
    if not materialize:
        return scored, None
    t0 = time.perf_counter()
    scored = scored.materialize()
    n = scored.count()
    return scored, n / max(time.perf_counter() - t0, 1e-9)


class _ScoredLines(TypedDict):
    """A batch of :class:`_LineScorer`: per input line its number, its result's JSON
    text and whether the result is an error record."""

    line: list[int]
    json: list[str]
    error: list[bool]


class _LineScorer:
    """A Ray actor scoring batches of raw JSONL lines exactly as ``groundrl score`` does
    (the same parse, the same error records), returning each result's JSON text."""

    def __init__(self, recipe: str, options: Mapping[str, Any]) -> None:
        self.recipe = get_recipe(recipe)
        self.rubric = self.recipe.rubric(**options)

    def __call__(self, batch: Mapping[str, Any]) -> _ScoredLines:
        items = [parse_jsonl_line(int(n), str(t)) for n, t in zip(batch["line"], batch["text"], strict=True)]
        results = list(score_records(self.recipe, self.rubric, items, batch_size=len(items)))
        return {
            "line": [r["line"] for r in results],
            "json": [json_text(r) for r in results],
            "error": ["error" in r for r in results],
        }


def score_lines(
    recipe: str,
    options: Mapping[str, Any],
    lines: list[str],
    out: Any,
    *,
    address: str | None = None,
    concurrency: int = 2,
    batch_size: int = 1024,
) -> tuple[int, int]:
    """``groundrl score --ray``: score JSONL ``lines`` (1-based, blank ones skipped) on Ray
    Data, writing to ``out`` what one process writes, in input order; returns
    ``(results, errors)``. Connects to ``address`` (``auto``, ``ray://…``) or starts a
    local Ray."""
    # lazy: Ray is the optional gpu extra, needed only on a Ray cluster
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # results come back in input order
    items = [{"line": i, "text": t} for i, t in enumerate(lines, start=1) if t.strip()]
    if not items:
        return 0, 0
    ds = ray.data.from_items(items).map_batches(
        _LineScorer,
        fn_constructor_args=(recipe, dict(options)),
        batch_size=batch_size,
        batch_format="numpy",
        concurrency=concurrency,
    )
    n = errors = 0
    for batch in ds.iter_batches(batch_size=batch_size, batch_format="numpy"):
        out.write("".join(str(t) + "\n" for t in batch["json"]))
        n += len(batch["json"])
        errors += int(sum(bool(e) for e in batch["error"]))
    return n, errors
