"""A judge behind any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, SGLang,
hosted APIs).

* async (``aiohttp``: at high concurrency it sustained ~10× the request rate of
  ``httpx`` against the same local server here) with at most ``concurrency`` requests in flight;
* a per-request ``timeout``; up to ``max_retries`` retries with exponential backoff
  (``backoff · 2^attempt`` seconds, plus the server's ``Retry-After`` when larger) on
  429, 5xx, timeouts and connection errors — never on other 4xx, which are the
  caller's mistake and will not heal;
* images sent as data URLs (http(s) URLs pass through);
* after the last retry a request becomes ``Generation(error=…)``: counted in
  ``stats.failures``, never raised into a training step;
* ``n`` samples per request through the ``n`` field; with a cache, each sample index is
  cached separately and a request whose samples are all cached is not sent.

Log-probabilities use vLLM's ``prompt_logprobs`` extension of chat completions: the
request is sent twice with ``max_tokens=1`` — once ending in the generation prompt,
once with the continuation as a final assistant message (``continue_final_message``) —
and the continuation's tokens are the trailing ``len(second) − len(first)`` prompt
positions. Token boundaries at the junction may merge, so this is exact only when the
continuation starts a new token (a space or newline before it is safest). A server
without ``prompt_logprobs`` gives a clear error per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any

import aiohttp

from groundrl.judges.base import (
    BackgroundLoop,
    Generation,
    JudgeBackend,
    LogProbResult,
    Request,
    SamplingParams,
)
from groundrl.judges.cache import ResponseCache, cache_key
from groundrl.judges.images import map_content, to_data_url

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class JudgeHTTPError(Exception):
    def __init__(self, message: str, retry: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.retry_after = retry_after


def _wire_messages(request: Request) -> list[dict[str, Any]]:
    return map_content(request, lambda img: {"type": "image_url", "image_url": {"url": to_data_url(img)}})


class OpenAIBackend(JudgeBackend):
    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        concurrency: int = 16,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        cache: ResponseCache | str | None = None,
    ) -> None:
        super().__init__()
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"--judge-url must be an http(s) base URL such as http://127.0.0.1:8000/v1, got {base_url!r}"
            )
        if concurrency < 1:
            raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache = ResponseCache(cache) if isinstance(cache, str) else cache
        self._loop = BackgroundLoop()
        self._client: aiohttp.ClientSession | None = None
        self._sem: asyncio.Semaphore | None = None

    # -- plumbing ----------------------------------------------------------------

    def _ensure(self) -> tuple[aiohttp.ClientSession, asyncio.Semaphore]:
        # Created lazily on the backend's background loop, where every request runs.
        if self._client is None or self._sem is None:
            connector = aiohttp.TCPConnector(limit=self.concurrency)
            self._client = aiohttp.ClientSession(
                connector=connector, headers=self.headers, timeout=aiohttp.ClientTimeout(total=self.timeout)
            )
            self._sem = asyncio.Semaphore(self.concurrency)
        return self._client, self._sem

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        client, sem = self._ensure()
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            try:
                async with sem:
                    self.stats.requests += 1
                    async with client.post(f"{self.base_url}/chat/completions", json=body) as resp:
                        status, text, headers = resp.status, await resp.text(), resp.headers
                if status == 200:
                    try:
                        return json.loads(text)
                    except ValueError as e:
                        raise JudgeHTTPError(f"malformed JSON from server: {e}", retry=True) from e
                retry_after = headers.get("retry-after")
                ra = float(retry_after) if retry_after and retry_after.replace(".", "", 1).isdigit() else None
                raise JudgeHTTPError(
                    f"HTTP {status}: {text[:200]}", retry=status in RETRY_STATUS, retry_after=ra
                )
            except JudgeHTTPError as e:
                last = str(e)
                if not e.retry or attempt == self.max_retries:
                    break
                delay = max(self.backoff * 2**attempt, min(e.retry_after or 0.0, 30.0))
            except (TimeoutError, aiohttp.ClientError) as e:
                last = f"{type(e).__name__}: {e}" if str(e) else f"Timeout ({type(e).__name__})"
                if attempt == self.max_retries:
                    break
                delay = self.backoff * 2**attempt
            self.stats.retries += 1
            await asyncio.sleep(delay)
        raise JudgeHTTPError(last, retry=False)

    # -- generation --------------------------------------------------------------

    async def _one(self, request: Request, params: SamplingParams) -> Generation:
        keys = (
            [cache_key(self.model, request, params, i) for i in range(params.n)]
            if self.cache is not None
            else []
        )
        if self.cache is not None:
            cached = [self.cache.get(k) for k in keys]
            if all(c is not None for c in cached):
                self.stats.cache_hits += 1
                return Generation(texts=cached)  # type: ignore[arg-type]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": _wire_messages(request),
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "n": params.n,
        }
        if params.seed is not None:
            body["seed"] = params.seed
        try:
            data = await self._post(body)
            choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
            texts = [
                c["message"]["content"]
                for c in choices
                if isinstance(c.get("message", {}).get("content"), str)
            ]
            if not texts:
                raise JudgeHTTPError(f"no usable choices in response: {json.dumps(data)[:200]}", retry=False)
        except (JudgeHTTPError, KeyError, TypeError, AttributeError) as e:
            self.stats.failures += 1
            return Generation(error=str(e) or type(e).__name__)
        if self.cache is not None:
            for k, t in zip(keys, texts, strict=False):
                self.cache.put(k, t)
        return Generation(texts=texts)

    async def _agenerate(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]:
        return list(await asyncio.gather(*(self._one(r, params) for r in requests)))

    async def agenerate(
        self, requests: Sequence[Request], params: SamplingParams | None = None
    ) -> list[Generation]:
        # The client lives on the backend's own loop; callers on any loop await it there.
        fut = asyncio.run_coroutine_threadsafe(
            self._agenerate(requests, params or SamplingParams()), self._loop.loop
        )
        return await asyncio.wrap_future(fut)

    def generate(self, requests: Sequence[Request], params: SamplingParams | None = None) -> list[Generation]:
        return self._loop.run(self._agenerate(requests, params or SamplingParams()))

    # -- log-probabilities -------------------------------------------------------

    async def _prompt_logprobs(
        self, messages: list[dict[str, Any]], continue_final: bool
    ) -> list[float | None]:
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 0,
            "add_generation_prompt": not continue_final,
            "continue_final_message": continue_final,
        }
        data = await self._post(body)
        plp = data.get("prompt_logprobs")
        if not isinstance(plp, list):
            raise JudgeHTTPError(
                "server does not return prompt_logprobs (vLLM's extension); log-prob scoring needs it",
                retry=False,
            )
        out: list[float | None] = []
        for entry in plp:
            if not entry:
                out.append(None)
                continue
            # {token_id: {"logprob": …, "rank": …}}: the prompt's own token is the one entry
            # with prompt_logprobs=0 (vLLM adds it even when it is not in the top-k).
            vals = [v.get("logprob") for v in entry.values() if isinstance(v, dict)]
            out.append(float(vals[0]) if vals else None)
        return out

    async def _alogprob(self, request: Request, continuation: str) -> LogProbResult:
        msgs = _wire_messages(request)
        try:
            base, full = await asyncio.gather(
                self._prompt_logprobs(msgs, continue_final=False),
                self._prompt_logprobs(
                    msgs + [{"role": "assistant", "content": continuation}], continue_final=True
                ),
            )
        except JudgeHTTPError as e:
            self.stats.failures += 1
            return LogProbResult(None, str(e))
        k = len(full) - len(base)
        if k <= 0:
            return (
                LogProbResult([], None)
                if not continuation
                else LogProbResult(None, "continuation added no tokens")
            )
        tail = full[-k:]
        if any(v is None for v in tail):
            return LogProbResult(None, "server returned no log-prob for some continuation tokens")
        return LogProbResult([float(v) for v in tail])  # type: ignore[arg-type]

    def logprob(self, requests: Sequence[Request], continuations: Sequence[str]) -> list[LogProbResult]:
        async def run() -> list[LogProbResult]:
            return list(
                await asyncio.gather(
                    *(self._alogprob(r, c) for r, c in zip(requests, continuations, strict=True))
                )
            )

        return self._loop.run(run())

    def close(self) -> None:
        if self._client is not None:
            client = self._client
            with contextlib.suppress(Exception):
                self._loop.run(client.close())
            self._client = None
        self._loop.close()


__all__ = ["JudgeHTTPError", "OpenAIBackend"]
