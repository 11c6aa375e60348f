"""The FastAPI app behind ``groundrl serve``: :func:`create_app`.

Routes:

* ``POST /score`` — ``{"recipe": NAME, "samples": [{completion, …recipe fields}]}`` →
  ``{"results": [{id, reward, parts, reasons} | {id, error}]}``, one result per sample in
  order, exactly what ``groundrl score`` writes per line (without ``line``). ``recipe`` may
  be left out when the server has a default (``recipe=``). Any recipe may be named; its
  rubric is built once (with the server's options for it) and cached.
* ``POST /get_reward`` — OpenRLHF: ``{"query": [...], "prompts": [...], "labels": [...]}``
  → ``{"rewards", "scores", "extra_logs", "errors"}`` for the server's ``recipe`` (422
  without one); the completion is the query minus its prompt prefix, the label fills the
  recipe's label field (:func:`groundrl.integrations.openrlhf.score_queries`).
  ``prompts`` may be left out (the whole query is the completion) and ``labels`` may be
  null, but a query whose label leaves a required field empty gets a null reward and a
  message in ``errors`` (null for scored queries), counted in
  ``groundrl_sample_errors_total``.
* ``GET /health`` — ``{"status": "ok", …}``; the only route without the token.
* ``GET /metrics`` — Prometheus text (:mod:`groundrl.serve.metrics`).

Errors (our choices where the issue is open): a body that is not JSON is a 400; a body
over ``max_body_bytes`` a 413 (read no further); a malformed envelope (not an object, an
unknown top-level field in ``/score``, ``recipe`` unknown, ``samples`` not a list or over
``max_samples``, ``query``/``prompts``/``labels`` of the wrong shape) a 422 whose
``detail`` names the field. A *sample* that is not an object or lacks a recipe field is
not a request error: it gets ``{"id", "error"}`` in ``results`` and the other samples are
scored. A missing or wrong bearer token is a 401 (``WWW-Authenticate: Bearer``). When
accepting a request would hold more than ``max_queue`` samples in the server, it gets a
503 with ``Retry-After``. Non-finite rewards (NaN/inf from a user part) are sent as
``null``: JSON has no NaN.

Execution: every request goes through a per-(route, recipe) :class:`MicroBatcher` that
scores in a worker thread; judge-backed rubrics (a ``Part(batched=True)``) wait up to
``max_wait_ms`` for company, rule-only ones do not wait. On shutdown the batchers finish
the work they accepted before the worker threads stop (uvicorn first waits for in-flight
requests).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import time
from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal, NotRequired, TypedDict
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI, Request
from fastapi.responses import Response

from groundrl.integrations.common import normalise, response_text
from groundrl.integrations.openrlhf import _auto_range, label_to_sample
from groundrl.io import json_text, rename_fields
from groundrl.recipes import get_recipe, recipe_names
from groundrl.recipes.base import Recipe
from groundrl.results import TRAINER_NOT_APPLICABLE, part_columns
from groundrl.rubric import Rubric
from groundrl.scoring import score_records
from groundrl.serve import openapi as oa
from groundrl.serve.batching import Admission, MicroBatcher, Overloaded
from groundrl.serve.body import json_elements as json_elements  # re-exported (tests, users)
from groundrl.serve.body import too_many_values
from groundrl.serve.judge_health import DEGRADED_RATE, count_failures
from groundrl.serve.limits import BODY_TIMEOUT_S, MAX_BODY_ELEMENTS, MIN_BODY_RATE, Limits
from groundrl.serve.limits import MAX_SAMPLES as MAX_SAMPLES  # re-exported
from groundrl.serve.limits import MiB as MiB  # re-exported
from groundrl.serve.metrics import Metrics
from groundrl.serve.schemas import JSONSchema, check, reward_body, score_body

log = logging.getLogger("groundrl.serve")

ROUTES = ("/score", "/get_reward", "/health", "/metrics")
DOC_ROUTES = ("/docs", "/openapi.json")  # only with docs=True; behind the token like the rest


SHED_DELAY_S = 0.25
# [ours] after uvicorn's --graceful-timeout, batches still scoring get this long before
# their judge calls are cancelled (their requests were already answered or cancelled)
SHUTDOWN_GRACE_S = 1.0
CLIENT_GONE = 499  # nginx's "client closed request": a hang-up is not a server error
GONE: Any = object()  # what _read_body returns for a hang-up


def shed_delay(retry_after_s: int) -> float:
    """Seconds a refused request is held before its 503 (at most ``Retry-After``): clients
    that ignore ``Retry-After`` and retry at once would otherwise keep the event loop busy
    answering 503s and starve the scoring (measured: 79 OK req/s at 256 connections with
    ``max_queue=512``). A held refusal costs a timer, not CPU."""
    return min(SHED_DELAY_S, float(retry_after_s))


class _Bad(Exception):
    """A request error: status + a message naming what to fix."""

    def __init__(self, status: int, msg: str) -> None:
        super().__init__(msg)
        self.status, self.msg = status, msg


# ---------------------------------------------------------------------------- JSON


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _default(obj: Any) -> Any:
    item = getattr(obj, "item", None)  # numpy / torch scalars a user part may return in info
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    return str(obj)


def _compact(obj: Any) -> bytes:
    return json_text(obj, allow_nan=False, separators=(",", ":"), default=_default).encode()


def dumps(obj: Any) -> bytes:
    """Compact JSON; non-finite floats become null (strict JSON has no NaN)."""
    try:
        return _compact(obj)
    except ValueError:
        return _compact(_finite(json.loads(json.dumps(obj, default=_default))))


def _response(obj: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(dumps(obj), status_code=status, media_type="application/json", headers=headers)


def _error(status: int, msg: str, headers: Mapping[str, str] | None = None) -> Response:
    return _response({"detail": msg}, status, headers)


def _type(x: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(x), "number" if isinstance(x, (int, float)) else type(x).__name__)


# ---------------------------------------------------------------------------- ASGI guard


class _Guard:
    """Pure ASGI middleware (cheaper than ``@app.middleware``): unknown routes (404), bearer
    token, load shedding before any body is read, body size limit (Content-Length checked
    first, chunked bodies counted as they arrive), and one metrics observation per request.

    Shedding: a scoring request is answered 503 + ``Retry-After`` *before its body is read*
    when the sample queue is full, or when the bodies being held by the server (read, not
    yet answered) would pass ``max_buffered_bytes`` (default 4 × ``max_body_bytes``), so a
    burst of large requests cannot grow memory past that bound.
    """

    def __init__(
        self,
        app: Any,
        metrics: Metrics,
        token: str | None,
        max_body_bytes: int,
        admission: Admission | None = None,
        max_buffered_bytes: int | None = None,
        retry_after_s: int = 1,
        body_timeout_s: float = BODY_TIMEOUT_S,
        min_body_rate: float = MIN_BODY_RATE,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.expected = b"bearer " + token.encode() if token is not None else None
        self.max_body = max_body_bytes
        self.admission = admission
        self.max_buffered = max_buffered_bytes or 4 * max_body_bytes
        # [ours: stalled large bodies must not starve small requests] large bodies may
        # fill 7/8 of the budget (one body of max_body_bytes always fits); the last 1/8 is
        # kept for bodies of ≤ 1/64 of it
        self.large_limit = max(self.max_buffered - self.max_buffered // 8, max_body_bytes)
        self.small_body = self.max_buffered // 64
        self.buffered = 0  # bytes of bodies held now (one event loop: no lock needed)
        self.retry = {"Retry-After": str(retry_after_s)}
        self.shed_delay = shed_delay(retry_after_s)
        self.body_timeout = body_timeout_s
        self.min_rate = min_body_rate

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        path = scope.get("path", "")
        status = 500

        started = False

        async def send_status(message: dict) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status, started = message["status"], True
            await send(message)

        try:
            if path not in self.metrics.routes:  # before auth: a 404 reveals nothing a 401 hides
                await _send(send_status, 404, f"no route {path[:100]!r}; routes are {', '.join(ROUTES)}")
                return
            if self.expected is not None and path != "/health" and not self._authorized(scope):
                await _send(send_status, 401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
                return
            if scope.get("method") in ("POST", "PUT", "PATCH"):
                if self.admission is not None and self.admission.pending >= self.admission.limit:
                    self.admission.refused += 1
                    await asyncio.sleep(self.shed_delay)  # a client ignoring Retry-After waits too
                    await _send(
                        send_status, 503, "server overloaded (sample queue full); retry later", self.retry
                    )
                    return
                body = await self._read_body(scope, receive, send_status)
                if body is GONE:
                    status = CLIENT_GONE
                    return
                if body is None:
                    return
                try:
                    await self.app(scope, _replay(body, receive), send_status)
                finally:
                    self.buffered -= len(body)
                return
            await self.app(scope, receive, send_status)
        except asyncio.CancelledError:
            # uvicorn cancels requests still running past --graceful-timeout: answer them in
            # JSON (uvicorn would send a plain-text 500 and log a traceback)
            if started is False:
                await _send(send_status, 503, "server shutting down; retry on another replica", self.retry)
        finally:
            self.metrics.observe(path, status, time.perf_counter() - t0)

    def _authorized(self, scope: dict) -> bool:
        """``Authorization: Bearer <token>`` (the scheme in any case, RFC 7235 §2.1), or
        ``?token=<token>`` in the URL for clients that cannot send headers (OpenRLHF posts
        to ``--reward.remote_url`` as given)."""
        got = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, rest = value.partition(b" ")
                got = scheme.lower() + b" " + rest
                break
        if hmac.compare_digest(got, self.expected):  # type: ignore[arg-type]
            return True
        query = scope.get("query_string", b"")
        if b"token=" not in query:
            return False
        for pair in query.split(b"&"):
            key, _, value = pair.partition(b"=")
            if key == b"token":
                return hmac.compare_digest(b"bearer " + unquote_to_bytes(value), self.expected)  # type: ignore[arg-type]
        return False

    def _next_chunk_deadline(self, start: float, last: float, size: int) -> float:
        """When a body that has sent ``size`` bytes, the last at ``last``, is too slow:
        ``body_timeout_s`` without a byte, or less than ``min_body_rate`` bytes/s on
        average once ``body_timeout_s`` of grace has passed."""
        idle = last + self.body_timeout
        if self.min_rate <= 0:
            return idle
        return min(idle, start + self.body_timeout + size / self.min_rate)

    async def _read_body(self, scope: dict, receive: Any, send: Any) -> Any:
        """The whole body (bytes), counted in ``buffered`` until the caller releases it;
        None after answering 413/400/408/503, or GONE when the client hung up; nothing
        left counted."""
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                if not value.isdigit():
                    await _send(send, 400, "Content-Length is not a number")
                    return None
                declared = int(value)
                if declared > self.max_body:
                    await _send(send, 413, f"body over {self.max_body} bytes")
                    return None
        limit = (
            self.max_buffered if declared is not None and declared <= self.small_body else self.large_limit
        )
        loop = asyncio.get_running_loop()
        start = last = loop.time()
        chunks, size = [], 0
        try:
            while True:
                timeout = self._next_chunk_deadline(start, last, size) - loop.time()
                try:
                    message = await asyncio.wait_for(receive(), max(timeout, 0.0))
                except TimeoutError:
                    self.metrics.add_slow_body()
                    msg = f"request body too slow (under {self.min_rate:.0f} B/s or idle {self.body_timeout:g} s)"
                    await _send(send, 408, msg, {"Connection": "close"})
                    return None
                if message["type"] == "http.disconnect":
                    return GONE
                last = loop.time()
                chunk = message.get("body", b"")
                size += len(chunk)
                self.buffered += len(chunk)
                if size > self.max_body:  # chunked upload past the limit: stop reading here
                    await _send(send, 413, f"body over {self.max_body} bytes")
                    return None
                if self.buffered > limit:
                    await _send(
                        send, 503, "server overloaded (request bodies in memory); retry later", self.retry
                    )
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    body = b"".join(chunks)
                    size = 0  # counted until the caller releases it
                    return body
        finally:
            self.buffered -= size


def _replay(body: bytes, receive: Any) -> Any:
    sent = False

    async def replay() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _send(send: Any, status: int, msg: str, headers: Mapping[str, str] | None = None) -> None:
    payload = dumps({"detail": msg})
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


# ---------------------------------------------------------------------------- app


def _check_fields(fields: Any) -> None:
    if fields is not None and (
        not isinstance(fields, Mapping)
        or not all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in fields.items())
    ):
        raise ValueError("fields must map our field names to the input's, e.g. {'completion': 'output'}")


def _check_token(token: Any) -> None:
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ValueError("token must be a non-empty string (or None for no authentication)")


JUDGE_FAILURES_HEADER = "X-Groundrl-Judge-Failures"


class HealthBody(TypedDict):
    """``GET /health``: ``degraded`` (still 200) when recent judge calls fail."""

    status: Literal["ok", "degraded"]
    recipe: str | None
    recipes: list[str]
    judge_failure_rate: NotRequired[float]
    judge_scores_recent: NotRequired[int]


def _judge_counts(judged: tuple[str, ...], parts: object, reasons: object) -> tuple[int, int]:
    """(judge part scores that count as calls, failures among them) for one result: a
    part that did not apply without failing (``None``, e.g. no frame mentions) is no call."""
    if not judged or not isinstance(parts, dict):
        return 0, 0
    failed = count_failures(reasons if isinstance(reasons, dict) else None, judged)
    calls = sum(parts.get(n) is not None for n in judged)
    return max(calls, failed), failed


def _score_fn(rec: Recipe, rub: Rubric, judged: tuple[str, ...] = (), metrics: Metrics | None = None) -> Any:
    def score(items: list) -> list:
        # items are (index in its request, sample or None, error); one rubric call
        t0 = time.perf_counter()
        # plain dicts: the route pops ``line`` and this adds the judge failures
        out: list[dict[str, object]] = [
            dict(r) for r in score_records(rec, rub, items, batch_size=len(items), unit="sample")
        ]
        if judged and metrics is not None:
            calls = failed = 0
            for r in out:
                c, f = _judge_counts(judged, r.get("parts"), r.get("reasons"))
                r["_judge_failures"] = f
                calls, failed = calls + c, failed + f
            metrics.add_judge(rec.name, calls - failed, failed, time.perf_counter() - t0)
        return out

    return score


def _reward_fn(rec: Recipe, rub: Rubric, judged: tuple[str, ...] = (), metrics: Metrics | None = None) -> Any:
    """``(reward, score, logs, error, judge failures)`` per query, as
    :func:`groundrl.integrations.openrlhf.score_queries` scores them (the verdicts are
    kept here for their reasons). A query whose label lacks a field the recipe requires
    (``labels: null`` for a recipe with a gold field) is an error entry with null reward,
    like ``/score``'s missing field, never a silent 0 (issue 29)."""

    def score(items: list) -> list:
        t0 = time.perf_counter()
        samples, errors = [], []
        for i, (_q, _p, lab) in enumerate(items):
            sample = label_to_sample(lab, rec.label_field)
            missing = rec.missing_fields({**sample, "completion": ""})
            samples.append(sample)
            errors.append(
                f"query {i}: its label gives no {missing[0]!r} (recipe {rec.name} needs "
                f"{', '.join(rec.required)}; send it as the label or in a JSON object label)"
                if missing
                else None
            )
        ok = [i for i, err in enumerate(errors) if err is None]
        out: list = [(None, None, dict.fromkeys(rub.names), err, 0) for err in errors]
        if not ok:
            return out
        completions = [response_text(items[i][0], items[i][1]) for i in ok]
        verdicts = rub.score_batch(completions, [samples[i] for i in ok])
        rng = _auto_range(None, rub)
        logs = part_columns(verdicts, rub.names, TRAINER_NOT_APPLICABLE)
        calls = failed = 0
        for k, (i, v) in enumerate(zip(ok, verdicts, strict=True)):
            parts = {n: sc.value for n, sc in v.parts.items()}
            c, f = _judge_counts(judged, parts, {n: sc.reason for n, sc in v.parts.items()})
            calls, failed = calls + c, failed + f
            out[i] = (v.total, normalise(v.total, rng), {n: col[k] for n, col in logs.items()}, None, f)
        if judged and metrics is not None:
            metrics.add_judge(rec.name, calls - failed, failed, time.perf_counter() - t0)
        return out

    return score


class _Scorers:
    """One app's recipes, rubrics (built once per recipe, with the server's options) and
    micro-batchers (one per route and recipe), made on first use."""

    def __init__(
        self,
        names: tuple[str, ...],
        extra: Mapping[str, Recipe],
        options: Mapping[str, Mapping[str, Any]],
        overrides: Mapping[str, Rubric],
        admission: Admission,
        batching: Mapping[str, Any],
        metrics: Metrics | None = None,
    ) -> None:
        for what, mapping in (("recipe_options", options), ("rubric_overrides", overrides)):
            for name in mapping:
                if name not in names:
                    raise ValueError(
                        f"{what} names unknown recipe {name!r}; choose one of {', '.join(names)}"
                    )
        for name, rub in overrides.items():
            if not isinstance(rub, Rubric):
                raise TypeError(f"rubric_overrides[{name!r}] must be a Rubric, got {type(rub).__name__}")
        self.names, self.extra, self.options, self.overrides = names, extra, options, overrides
        self.admission, self.batching, self.metrics = admission, batching, metrics
        self.rubrics: dict[str, tuple[Recipe, Rubric]] = {}
        self.batchers: dict[str, MicroBatcher] = {}

    def resolve(self, name: str) -> tuple[Recipe, Rubric]:
        if name not in self.rubrics:
            rec = self.extra[name] if name in self.extra else get_recipe(name)
            rub = self.overrides.get(name) or rec.rubric(**self.options.get(name, {}))
            if self.batching.get("part_timeout_s") is not None and rub.part_timeout is None:
                rub.part_timeout = self.batching["part_timeout_s"]  # a part that hangs scores `timeout`
            self.rubrics[name] = (rec, rub)
        return self.rubrics[name]

    def batcher(self, route: str, name: str) -> MicroBatcher:
        key = f"{route}:{name}"
        if key not in self.batchers:
            rec, rub = self.resolve(name)
            judged = tuple(p.name for p in rub.parts if p.batched)  # rule-only rubrics never wait
            b = self.batching
            self.batchers[key] = MicroBatcher(
                (_score_fn if route == "score" else _reward_fn)(rec, rub, judged, self.metrics),
                max_batch=b["max_batch"],
                max_wait=b["max_wait_ms"] / 1000 if judged else 0.0,
                admission=self.admission,
                concurrency=b["batch_concurrency"],
                name=key,
            )
        return self.batchers[key]

    def built(self, route: str, name: str) -> MicroBatcher | Response:
        try:
            return self.batcher(route, name)
        except Exception as e:  # e.g. a recipe module that fails to import
            log.exception("building recipe %s", name)
            return _error(500, f"recipe {name!r} could not be built: {type(e).__name__}: {e}")

    async def close(self, grace_s: float = 1.0) -> None:
        """uvicorn has let in-flight requests finish (or cancelled them past
        ``--graceful-timeout``); batches still scoring after ``grace_s`` more seconds
        belong to no live request: their requests are failed, the rubrics closed (which
        cancels in-flight judge calls), and their threads are not waited for."""
        batchers = list(self.batchers.values())
        done = asyncio.gather(*(b.close() for b in batchers), return_exceptions=True)
        try:
            await asyncio.wait_for(asyncio.shield(done), grace_s)
        except TimeoutError:
            running = sum(b.running for b in batchers)
            for b in batchers:
                b.abort()
            log.warning(
                "shutdown: %d batch(es) still scoring after the grace period: their requests failed, "
                "judge calls cancelled",
                running,
            )
            done.add_done_callback(lambda f: f.cancelled() or f.exception())  # consumed, not awaited
        self.batchers.clear()
        # closing a judge backend cancels its in-flight calls: off the loop, it may block briefly
        await asyncio.to_thread(self._close_rubrics)

    def _close_rubrics(self) -> None:
        for name, (_rec, rub) in list(self.rubrics.items()):
            if name not in self.overrides:  # a caller's rubric is the caller's to close
                rub.close()


OFF_LOOP_BYTES = 256 * 1024  # [ours] bodies past this are counted and parsed in a thread


def _parse_body(raw: bytes, fields: str, max_elements: int) -> dict[str, Any]:
    # [issue 26: 15 MiB of `{},` took 1.6 GB once parsed] bound the parsed size, not only
    # bytes; [issue 42 N1] the count is linear whatever the body's shape (serve/body.py)
    n = too_many_values(raw, max_elements)
    if n is not None:
        raise _Bad(413, f"the body holds {n} JSON values; at most {max_elements} per request")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as e:  # RecursionError: nesting deeper than Python's limit
        raise _Bad(400, f"the body is not JSON: {str(e)[:200]}") from None
    if not isinstance(body, dict):
        raise _Bad(422, f"the body must be a JSON object with {fields}, got a JSON {_type(body)}")
    return body


async def _body_object(
    request: Request, fields: str, max_elements: int = MAX_BODY_ELEMENTS
) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) <= OFF_LOOP_BYTES:
        return _parse_body(raw, fields, max_elements)
    # a large body is scanned off the event loop: /health and small requests go on meanwhile
    return await asyncio.to_thread(_parse_body, raw, fields, max_elements)


def _score_request(
    body: dict[str, Any], schema: JSONSchema, default: str | None, fields: Mapping[str, str] | None = None
):
    """``(recipe name, items)`` of a ``/score`` body (checked against the schema that
    /openapi.json publishes), or ``_Bad`` naming the field. ``fields``: ``serve --field``
    renames, applied to each sample (one without a mapped field is that sample's error)."""
    err = check(schema, body)
    if err:
        raise _Bad(422, err)
    items = [
        _renamed(i, s, fields)
        if isinstance(s, dict)
        else (i, None, f"sample {i} is a JSON {_type(s)}, expected an object")
        for i, s in enumerate(body["samples"], start=1)
    ]
    return body.get("recipe", default), items


def _renamed(i: int, sample: Mapping[str, Any], fields: Mapping[str, str] | None) -> tuple[int, Any, str]:
    if not fields:
        return i, sample, ""
    sample, missing = rename_fields(sample, fields)
    if not missing:
        return i, sample, ""
    ours = next(o for o, t in fields.items() if t == missing)
    return i, sample, f"sample {i}: missing field {missing!r} (read as {ours!r} by --field {ours}={missing})"


def _reward_request(body: dict[str, Any], schema: JSONSchema) -> list[tuple[str, str, Any]]:
    """``(query, prompt, label)`` triples of a ``/get_reward`` body (the published schema,
    then the lengths it cannot state), or ``_Bad``."""
    err = check(schema, body)
    if err:
        raise _Bad(422, err)
    queries = body["query"]
    n = len(queries)
    for what, what_is in (("prompts", "strings"), ("labels", "labels")):
        values = body.get(what)
        if values is not None and len(values) != n:
            raise _Bad(
                422,
                f"`{what}` must be null or a list of {n} {what_is} (as long as `query`), got a list of {len(values)}",
            )
    labels = body.get("labels") or [None] * n
    return list(zip(queries, body.get("prompts") or [""] * n, labels, strict=True))


class _Routes:
    """The app's four routes, over one set of scorers, metrics and admission."""

    def __init__(
        self,
        recipe: str | None,
        names: tuple[str, ...],
        scorers: _Scorers,
        metrics: Metrics,
        limits: Limits,
        fields: Mapping[str, str] | None = None,
    ) -> None:
        self.recipe, self.names, self.scorers, self.limits = recipe, names, scorers, limits
        self.fields = dict(fields or {})  # serve --field: /score samples' renames
        self.metrics, self.admission = metrics, scorers.admission
        # one schema per route: what /openapi.json publishes is what requests are checked with
        self.score_schema = score_body(names, limits.max_samples, recipe)
        self.reward_schema = reward_body(limits.max_samples)

    def add_to(self, app: FastAPI) -> None:
        app.exception_handler(_Bad)(_bad)
        app.get("/health", **oa.HEALTH)(self.health)
        app.get("/metrics", **oa.METRICS)(self.prometheus)
        app.post("/score", **oa.score(self.score_schema))(self.score)
        app.post("/get_reward", **oa.get_reward(self.reward_schema))(self.get_reward)

    async def run(self, route: str, name: str, items: list) -> list | Response:
        b = self.scorers.built(route, name)
        if isinstance(b, Response):
            return b
        try:
            return await b.submit(items)
        except Overloaded as e:
            lim = self.limits
            msg = f"server overloaded ({e}: {self.admission.pending} of {lim.max_queue} samples queued); retry later"
            await asyncio.sleep(shed_delay(lim.retry_after_s))  # see shed_delay
            return _error(503, msg, {"Retry-After": str(lim.retry_after_s)})
        except Exception as e:
            log.exception("scoring failed in %s", b.name)
            return _error(500, f"scoring failed: {type(e).__name__}: {e}")

    async def health(self) -> Response:
        out: HealthBody = {"status": "ok", "recipe": self.recipe, "recipes": list(self.names)}
        recent = self.metrics.judge_failure_rate()
        if recent is not None:
            rate, n = recent
            out["judge_failure_rate"], out["judge_scores_recent"] = round(rate, 4), n
            if rate > DEGRADED_RATE:
                out["status"] = "degraded"  # still 200: the server answers, its judge does not
        return _response(out)

    async def prometheus(self) -> Response:
        batches = {k: (b.batches, b.scored) for k, b in self.scorers.batchers.items()}
        text = self.metrics.render(
            queue_depth=self.admission.pending,
            queue_limit=self.limits.max_queue,
            high_water=self.admission.high_water,
            batches=batches,
        )
        return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def score(self, request: Request) -> Response:
        body = await _body_object(request, "`recipe` and `samples`", self.limits.max_body_elements)
        name, items = _score_request(body, self.score_schema, self.recipe, self.fields)
        if not items:
            return _response({"results": []})
        out = await self.run("score", name, items)
        if isinstance(out, Response):
            return out
        judge_failures = 0
        for r in out:
            r.pop("line", None)
            judge_failures += r.pop("_judge_failures", 0)
        self.metrics.add_sample_errors(name, sum("error" in r for r in out))
        return _response({"results": out}, headers={JUDGE_FAILURES_HEADER: str(judge_failures)})

    async def get_reward(self, request: Request) -> Response:
        recipe = self.recipe
        if recipe is None:
            msg = "this server was started without a recipe (groundrl serve --recipe NAME); /get_reward needs one"
            raise _Bad(422, msg)
        body = await _body_object(request, "`query`, `prompts` and `labels`", self.limits.max_body_elements)
        out = await self.run("get_reward", recipe, _reward_request(body, self.reward_schema))
        if isinstance(out, Response):
            return out
        part_names = self.scorers.resolve(recipe)[1].names
        errors = [e for _, _, _, e, _ in out]
        self.metrics.add_sample_errors(recipe, sum(e is not None for e in errors))
        return _response(
            {
                "rewards": [r for r, *_ in out],
                "scores": [s for _, s, *_ in out],
                "extra_logs": {k: [logs.get(k) for _, _, logs, _, _ in out] for k in part_names},
                "errors": errors,
            },
            headers={JUDGE_FAILURES_HEADER: str(sum(f for *_, f in out))},
        )


async def _bad(_request: Request, exc: _Bad) -> Response:
    return _error(exc.status, exc.msg)


def _recipe_names(
    recipe: str | None, recipes: Mapping[str, Recipe] | None
) -> tuple[dict[str, Recipe], tuple[str, ...]]:
    """The extra recipes (checked) and every recipe name the server knows: the
    registry's (built-in, registered, installed) as of now, plus ``recipes``."""
    extra = dict(recipes or {})
    for name, rec in extra.items():
        if not isinstance(rec, Recipe):
            raise TypeError(f"recipes[{name!r}] must be a groundrl Recipe, got {type(rec).__name__}")
    names = tuple(dict.fromkeys((*recipe_names(), *extra)))
    if recipe is not None and recipe not in names:
        raise ValueError(f"unknown recipe {recipe!r}; choose one of {', '.join(names)}")
    return extra, names


def _fastapi(scorers: _Scorers, metrics: Metrics, token: str | None, limits: Limits, docs: bool) -> FastAPI:
    """The bare app: lifespan (closing the scorers), docs routes, the ASGI guard."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        yield
        await scorers.close(SHUTDOWN_GRACE_S)

    app = FastAPI(
        title="groundrl reward server",
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url=None,
        openapi_url="/openapi.json" if docs else None,
    )
    app.add_middleware(
        _Guard,
        metrics=metrics,
        token=token,
        max_body_bytes=limits.max_body_bytes,
        admission=scorers.admission,
        max_buffered_bytes=limits.max_buffered_bytes,
        retry_after_s=limits.retry_after_s,
        body_timeout_s=float(limits.body_timeout_s),
        min_body_rate=float(limits.min_body_rate),
    )
    return app


def create_app_from_limits(
    recipe: str | None,
    token: str | None,
    limits: Limits,
    *,
    docs: bool = False,
    rubric_overrides: Mapping[str, Rubric] | None = None,
    recipe_options: Mapping[str, Mapping[str, Any]] | None = None,
    recipes: Mapping[str, Recipe] | None = None,
    fields: Mapping[str, str] | None = None,
) -> FastAPI:
    """:func:`create_app` with its limits as one checked :class:`Limits`."""
    _check_fields(fields)
    _check_token(token)
    extra, names = _recipe_names(recipe, recipes)
    metrics = Metrics((*ROUTES, *DOC_ROUTES) if docs else ROUTES)
    batching = {
        "max_batch": limits.max_batch,
        "max_wait_ms": limits.max_wait_ms,
        "batch_concurrency": limits.batch_concurrency,
        "part_timeout_s": limits.part_timeout_s,
    }
    options = {k: dict(v) for k, v in (recipe_options or {}).items()}
    admission = Admission(limits.max_queue)
    scorers = _Scorers(names, extra, options, dict(rubric_overrides or {}), admission, batching, metrics)
    for name in dict.fromkeys([*([recipe] if recipe else []), *options, *scorers.overrides]):
        scorers.resolve(name)  # configuration errors surface now, not at the first request
    app = _fastapi(scorers, metrics, token, limits, docs)
    _Routes(recipe, names, scorers, metrics, limits, fields).add_to(app)
    app.state.metrics = metrics
    app.state.admission = admission
    app.state.batchers = scorers.batchers
    app.state.recipe = recipe
    return app


def create_app(
    recipe: str | None = None,
    token: str | None = None,
    max_batch: int = Limits.max_batch,
    max_wait_ms: float = Limits.max_wait_ms,
    max_queue: int = Limits.max_queue,
    max_body_bytes: int = Limits.max_body_bytes,
    rubric_overrides: Mapping[str, Rubric] | None = None,
    *,
    recipe_options: Mapping[str, Mapping[str, Any]] | None = None,
    recipes: Mapping[str, Recipe] | None = None,
    max_samples: int = Limits.max_samples,
    batch_concurrency: int = Limits.batch_concurrency,
    retry_after_s: int = Limits.retry_after_s,
    max_buffered_bytes: int | None = Limits.max_buffered_bytes,
    docs: bool = False,
    body_timeout_s: float = Limits.body_timeout_s,
    min_body_rate: float = Limits.min_body_rate,
    max_body_elements: int = Limits.max_body_elements,
    part_timeout_s: float | None = Limits.part_timeout_s,
    fields: Mapping[str, str] | None = None,
) -> FastAPI:
    """The reward server as an ASGI app (no server is started; run it with uvicorn).

    ``recipe``: the default for ``/score`` and the recipe of ``/get_reward``.
    ``token``: require ``Authorization: Bearer <token>`` (or ``?token=<token>`` in the URL,
    for OpenRLHF, which sends no headers) on every route but ``/health``. ``docs``: serve
    ``/openapi.json`` (the real request/response bodies and status codes,
    :mod:`groundrl.serve.openapi`) and ``/docs``; off by default. The limits and batching
    settings (``max_batch`` … ``part_timeout_s``) are the fields of :class:`Limits`,
    documented there.

    ``recipe_options``: ``{recipe: {option: value}}`` passed to ``Recipe.rubric``.
    ``rubric_overrides``: ``{recipe: Rubric}`` used instead of building one (tests, custom
    judges); the recipe still validates the samples. ``recipes``: extra or replacement
    :class:`Recipe` objects by name. ``fields``: ``{ours: theirs}``, each ``/score``
    sample's field THEIRS read as OURS (``groundrl serve --field``). Bad configuration
    raises ``ValueError``/``TypeError`` here; the default recipe's rubric is built here
    too, so its errors surface at start.
    """
    limits = Limits(
        max_batch=max_batch, max_wait_ms=max_wait_ms, max_queue=max_queue, max_body_bytes=max_body_bytes,
        max_samples=max_samples, batch_concurrency=batch_concurrency, retry_after_s=retry_after_s,
        max_buffered_bytes=max_buffered_bytes, body_timeout_s=body_timeout_s, min_body_rate=min_body_rate,
        max_body_elements=max_body_elements, part_timeout_s=part_timeout_s,
    )  # fmt: skip
    return create_app_from_limits(
        recipe, token, limits, docs=docs, rubric_overrides=rubric_overrides, recipe_options=recipe_options,
        recipes=recipes, fields=fields,
    )  # fmt: skip
