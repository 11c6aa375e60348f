"""The FastAPI app behind ``groundrl serve``.

Protocol choices: a malformed envelope (not JSON, ``samples`` not a list of objects,
unknown recipe, too many samples, body over the limit) is rejected whole (400 / 413 /
422 with a message naming the field); a sample that lacks a recipe field gets an
``{"error": …}`` entry in ``results`` and the other samples are scored, as in
``groundrl score``. ``/get_reward`` uses the ``--recipe`` given at start. Every route
but ``/health`` needs ``Authorization: Bearer <token>`` when a token is set. Under load
beyond ``max_queue`` queued samples, requests get 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from groundrl.integrations.openrlhf import score_queries
from groundrl.recipes import RECIPE_NAMES, get_recipe
from groundrl.rubric import Rubric
from groundrl.scoring import score_samples
from groundrl.serve.batching import MicroBatcher, Overloaded
from groundrl.serve.metrics import Metrics

MAX_SAMPLES = 4096


def create_app(
    recipe: str | None = None,
    token: str | None = None,
    max_batch: int = 64,
    max_wait_ms: float = 5.0,
    max_queue: int = 4096,
    max_body_bytes: int = 16 * 1024 * 1024,
    recipe_options: dict[str, Any] | None = None,
    rubric_overrides: dict[str, Rubric] | None = None,
):
    if recipe is not None and recipe not in RECIPE_NAMES:
        raise ValueError(f"unknown recipe {recipe!r}; choose one of {', '.join(RECIPE_NAMES)}")
    metrics = Metrics()
    overrides = dict(rubric_overrides or {})
    batchers: dict[str, MicroBatcher] = {}

    @asynccontextmanager
    async def lifespan(_app):
        yield
        for b in batchers.values():  # in-flight requests have finished: stop the workers
            await b.close()

    app = FastAPI(title="groundrl reward server", lifespan=lifespan)

    def rubric_for(name: str) -> Rubric:
        if name in overrides:
            return overrides[name]
        opts = recipe_options if (recipe_options and name == recipe) else {}
        overrides[name] = get_recipe(name).rubric(**(opts or {}))
        return overrides[name]

    def batcher_for(name: str) -> MicroBatcher:
        if name not in batchers:
            rec = get_recipe(name)
            rub = rubric_for(name)

            def score(samples: list[dict[str, Any]], rec=rec, rub=rub) -> list[dict[str, Any]]:
                out = score_samples(rec, rub, samples)
                metrics.samples += len(samples)
                return out

            # rule-only rubrics gain nothing from waiting for company: no wait for them
            wait = max_wait_ms / 1000 if any(p.batched for p in rub.parts) else 0.0
            batchers[name] = MicroBatcher(score, max_batch, wait, max_queue)
        return batchers[name]

    def error(status: int, msg: str, **headers: str) -> JSONResponse:
        return JSONResponse({"detail": msg}, status_code=status, headers=headers or None)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        t0 = time.perf_counter()
        path = request.url.path
        if token and path != "/health":
            auth = request.headers.get("authorization", "")
            if not hmac.compare_digest(auth, f"Bearer {token}"):
                resp = error(401, "missing or wrong bearer token")
                metrics.observe(path, 401, time.perf_counter() - t0)
                return resp
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > max_body_bytes:
            resp = error(413, f"body over {max_body_bytes} bytes")
        else:
            resp = await call_next(request)
        metrics.observe(path, resp.status_code, time.perf_counter() - t0)
        return resp

    async def body_json(request: Request) -> Any:
        raw = await request.body()
        if len(raw) > max_body_bytes:
            raise _Bad(413, f"body over {max_body_bytes} bytes")
        try:
            return json.loads(raw)
        except ValueError as e:
            raise _Bad(400, f"body is not JSON: {e}") from e

    class _Bad(Exception):
        def __init__(self, status: int, msg: str) -> None:
            self.status, self.msg = status, msg

    @app.exception_handler(_Bad)
    async def _bad(request: Request, exc: _Bad):
        return error(exc.status, exc.msg)

    @app.get("/health")
    async def health():
        return {"status": "ok", "recipe": recipe}

    @app.get("/metrics")
    async def prom():
        metrics.queue_depth = sum(b.pending for b in batchers.values())
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    @app.post("/score")
    async def score(request: Request):
        body = await body_json(request)
        if not isinstance(body, dict):
            raise _Bad(422, "body must be an object with `recipe` and `samples`")
        name = body.get("recipe", recipe)
        if name not in RECIPE_NAMES:
            raise _Bad(422, f"`recipe` must be one of {', '.join(RECIPE_NAMES)}, got {name!r}")
        samples = body.get("samples")
        if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
            raise _Bad(422, "`samples` must be a list of objects")
        if len(samples) > MAX_SAMPLES:
            raise _Bad(422, f"`samples` holds {len(samples)} items; at most {MAX_SAMPLES} per request")
        try:
            results = await batcher_for(name).submit(samples)
        except Overloaded:
            return error(503, "server overloaded; retry later", **{"Retry-After": "1"})
        return {"results": [{k: v for k, v in r.items() if k != "line"} for r in results]}

    @app.post("/get_reward")
    async def get_reward(request: Request):
        if recipe is None:
            raise _Bad(422, "this server was started without --recipe; /get_reward needs one")
        body = await body_json(request)
        if not isinstance(body, dict):
            raise _Bad(422, "body must be an object with `query`, `prompts`, `labels`")
        queries, prompts, labels = body.get("query"), body.get("prompts"), body.get("labels")
        if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
            raise _Bad(422, "`query` must be a list of strings")
        if prompts is None:
            prompts = [""] * len(queries)
        if not isinstance(prompts, list) or len(prompts) != len(queries):
            raise _Bad(422, "`prompts` must be a list as long as `query`")
        if labels is not None and (not isinstance(labels, list) or len(labels) != len(queries)):
            raise _Bad(422, "`labels` must be a list as long as `query`")
        b = batcher_for(recipe)
        if b.pending + len(queries) > b.max_pending:
            return error(503, "server overloaded; retry later", **{"Retry-After": "1"})
        rub, field = rubric_for(recipe), get_recipe(recipe).label_field
        out = await asyncio.to_thread(score_queries, rub, field, queries, prompts, labels)
        metrics.samples += len(queries)
        return out

    app.state.metrics = metrics
    app.state.batchers = batchers
    return app
