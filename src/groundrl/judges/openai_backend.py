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
  ``stats.failures``, never raised into a training step; so does a request that cannot
  be sent at all (an unreadable image, a message that is not a dict);
* ``n`` samples per request through the ``n`` field; with a cache, each sample index is
  cached separately and a request whose samples are all cached is not sent;
* an answer is read up to :func:`answer_cap` bytes (tied to ``max_tokens`` and ``n``);
  a larger one is a failed call, counted, and never read whole;
* ``extra_body`` is merged into every request (server-specific fields). vLLM fills
  unset sampling fields (``top_k``, ``repetition_penalty``…) from the model's
  ``generation_config.json`` unless it is served with ``--generation-config vllm``;
  ``extra_body={"top_k": -1, "repetition_penalty": 1.0}`` makes the samples follow
  :class:`SamplingParams` alone (hosted APIs reject these fields, so it is opt-in).

``stats``: ``requests`` counts requests asked for (not HTTP attempts), ``retries`` the
extra attempts, ``failures`` the requests that ended in an error, ``cache_hits`` the
requests answered from the cache.

Log-probabilities use vLLM's ``prompt_logprobs`` extension of chat completions
(``ChatCompletionRequest.prompt_logprobs``; the response carries
``prompt_logprobs: list[dict[token_id, {logprob, rank, decoded_token}] | None]`` and,
with ``return_token_ids``, ``prompt_token_ids``). The request is sent twice with
``max_tokens=1`` — once ending in the generation prompt, once with the continuation as
a final assistant message (``continue_final_message=True, add_generation_prompt=False``)
— and the continuation's tokens are the positions after the longest common prefix of
the two prompts' token ids (the trailing ``len(second) − len(first)`` positions when
the server sends no ids). A token that merges across the junction is therefore
included, never mis-attributed. The template and the images stay server-side, which is
why this and not ``/v1/completions`` with ``echo=True``: that needs the chat template
and each model's image placeholders rendered by the client. A server without
``prompt_logprobs`` (hosted APIs, SGLang's chat endpoint) gives a clear error per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import CancelledError
from typing import Any, NotRequired, TypedDict

import aiohttp

from groundrl.judges.base import (
    BackgroundLoop,
    ChatMessage,
    Generation,
    ImageURLPart,
    JudgeBackend,
    LogProbResult,
    RequestLike,
    SamplingParams,
    TextPart,
)
from groundrl.judges.cache import ResponseCache, as_cache, lookup, store
from groundrl.judges.images import ImagePolicy, map_content, text_part, to_data_url

log = logging.getLogger("groundrl.judges")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# [ours: issue 26] an answer is read up to a cap tied to what was asked for: 64 bytes per
# token asked (a token is at most a few UTF-8 characters, each at most 6 bytes as a JSON
# \u escape, plus per-choice fields) plus 64 KiB of envelope; a log-prob answer scales
# with the prompt, so it gets 256 bytes per byte of request. Past the cap the call fails
# (counted), unread: a 60 MB answer no longer reaches memory.
ANSWER_BYTES_PER_TOKEN = 64
ANSWER_ENVELOPE_BYTES = 64 * 1024
LOGPROB_BYTES_PER_REQUEST_BYTE = 256


def answer_cap(max_tokens: int, n: int = 1) -> int:
    """Bytes of a chat-completion answer read before the call counts as failed."""
    return ANSWER_ENVELOPE_BYTES + ANSWER_BYTES_PER_TOKEN * max_tokens * n


async def _read_capped(resp: aiohttp.ClientResponse, cap: int) -> str:
    """The body as text, or ``JudgeHTTPError`` (not retried) once it passes ``cap`` bytes
    (by ``Content-Length`` before reading, else as it arrives)."""
    over = f"judge answer over {cap} bytes (the cap for this call's max_tokens); not read"
    if resp.content_length is not None and resp.content_length > cap:
        raise JudgeHTTPError(over, retry=False)
    chunks, size = [], 0
    async for chunk in resp.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > cap:
            raise JudgeHTTPError(over, retry=False)
        chunks.append(chunk)
    return b"".join(chunks).decode(resp.charset or "utf-8", errors="replace")


class JudgeHTTPError(Exception):
    def __init__(self, message: str, retry: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.retry_after = retry_after


WireMessage = ChatMessage[TextPart | ImageURLPart]


class ChatBody(TypedDict):
    """A ``/chat/completions`` request body as :meth:`OpenAIBackend._one` sends it."""

    model: str
    messages: list[WireMessage]
    temperature: float
    top_p: float
    max_tokens: int
    n: int
    seed: NotRequired[int]


class LogProbBody(TypedDict):
    """The body of a vLLM ``prompt_logprobs`` call (see the module docstring)."""

    model: str
    messages: list[WireMessage]
    max_tokens: int
    temperature: float
    prompt_logprobs: int
    return_token_ids: bool
    add_generation_prompt: bool
    continue_final_message: bool


def _image_url(img: Any, policy: ImagePolicy) -> ImageURLPart:
    return {"type": "image_url", "image_url": {"url": to_data_url(img, policy)}}


def _wire_messages(request: RequestLike, policy: ImagePolicy) -> list[WireMessage]:
    return map_content(request, lambda img: _image_url(img, policy), text_part)


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
        extra_body: Mapping[str, object] | None = None,
        image_policy: ImagePolicy | None = None,
    ) -> None:
        super().__init__()
        self.image_policy = image_policy or ImagePolicy()
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"--judge-url must be an http(s) base URL such as http://127.0.0.1:8000/v1, got {base_url!r}"
            )
        if concurrency < 1:
            raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
        if not timeout > 0 or max_retries < 0 or backoff < 0:
            raise ValueError(
                f"need timeout > 0, max_retries ≥ 0, backoff ≥ 0; got {timeout}, {max_retries}, {backoff}"
            )
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.cache = as_cache(cache)
        self.extra_body = dict(extra_body or {})
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

    async def _post(self, body: ChatBody | LogProbBody, cap: int | None = None) -> object:
        client, sem = self._ensure()
        if cap is None:
            cap = ANSWER_ENVELOPE_BYTES + LOGPROB_BYTES_PER_REQUEST_BYTE * len(json.dumps(body))
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            try:
                async with (
                    sem,
                    client.post(
                        f"{self.base_url}/chat/completions", json={**self.extra_body, **body}
                    ) as resp,
                ):
                    status, headers = resp.status, resp.headers
                    text = await _read_capped(resp, cap)
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
            log.info(
                "judge %s: attempt %d failed (%s); retrying in %.2f s", self.model, attempt + 1, last, delay
            )
            await asyncio.sleep(delay)
        raise JudgeHTTPError(last, retry=False)

    # -- generation --------------------------------------------------------------

    async def _one(self, request: RequestLike, params: SamplingParams) -> Generation:
        self.stats.requests += 1
        try:
            self.image_policy.check_request(request)  # before the cache key reads any image
            keys, cached = lookup(self.cache, self.model, request, params)
            if cached is not None:
                self.stats.cache_hits += 1
                return Generation(texts=cached)
            body: ChatBody = {
                "model": self.model,
                "messages": _wire_messages(request, self.image_policy),
                "temperature": params.temperature,
                "top_p": params.top_p,
                "max_tokens": params.max_tokens,
                "n": params.n,
            }
            if params.seed is not None:
                body["seed"] = params.seed
            data = await self._post(body, answer_cap(params.max_tokens, params.n))
            choices = data.get("choices") if isinstance(data, dict) else None
            choices = [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
            choices.sort(key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)
            texts = [
                c["message"]["content"]
                for c in choices
                if isinstance(c.get("message"), dict) and isinstance(c["message"].get("content"), str)
            ]
            if not texts:
                raise JudgeHTTPError(f"no usable choices in response: {json.dumps(data)[:200]}", retry=False)
        except Exception as e:  # a request that cannot be sent or answered is its own error
            self.stats.failures += 1
            log.warning("judge %s: request failed: %s", self.model, e)
            return Generation(
                error=f"{type(e).__name__}: {e}" if not isinstance(e, JudgeHTTPError) else str(e)
            )
        store(self.cache, keys, texts)
        return Generation(texts=texts)

    async def _agenerate(self, requests: Sequence[RequestLike], params: SamplingParams) -> list[Generation]:
        return list(await asyncio.gather(*(self._one(r, params) for r in requests)))

    async def agenerate(
        self, requests: Sequence[RequestLike], params: SamplingParams | None = None
    ) -> list[Generation]:
        if self._loop.closed:  # its stopped loop would never answer
            self.stats.failures += len(requests)
            return [Generation(error="cancelled: the judge backend was closed") for _ in requests]
        # The client lives on the backend's own loop; callers on any loop await it there.
        fut = asyncio.run_coroutine_threadsafe(
            self._agenerate(requests, params or SamplingParams()), self._loop.loop
        )
        return await asyncio.wrap_future(fut)

    def generate(
        self, requests: Sequence[RequestLike], params: SamplingParams | None = None
    ) -> list[Generation]:
        try:
            return self._loop.run(self._agenerate(requests, params or SamplingParams()))
        except CancelledError:  # close() cancelled the calls in flight (a server shutting down)
            self.stats.failures += len(requests)
            return [Generation(error="cancelled: the judge backend was closed") for _ in requests]

    # -- log-probabilities -------------------------------------------------------

    async def _prompt_logprobs(
        self, messages: list[WireMessage], continue_final: bool
    ) -> tuple[list[float | None], list[int] | None]:
        body: LogProbBody = {
            "model": self.model,
            "messages": messages,
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": 0,
            "return_token_ids": True,
            "add_generation_prompt": not continue_final,
            "continue_final_message": continue_final,
        }
        data = await self._post(body)
        plp = data.get("prompt_logprobs") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(plp, list):
            raise JudgeHTTPError(
                "server does not return prompt_logprobs (vLLM's extension); log-prob scoring needs it",
                retry=False,
            )
        ids = data.get("prompt_token_ids")
        ids = ids if isinstance(ids, list) and len(ids) == len(plp) else None
        out: list[float | None] = []
        for pos, entry in enumerate(plp):
            if not isinstance(entry, dict) or not entry:
                out.append(None)
                continue
            # {token_id: {"logprob": …, "rank": …}}: with prompt_logprobs=0 the prompt's own
            # token is the one entry; with ids known, look it up rather than trust the order.
            own = entry.get(str(ids[pos])) if ids is not None else None
            own = own if isinstance(own, dict) else next(iter(entry.values()))
            lp = own.get("logprob") if isinstance(own, dict) else None
            out.append(float(lp) if isinstance(lp, (int, float)) else None)
        return out, ids

    async def _alogprob(self, request: RequestLike, continuation: str) -> LogProbResult:
        self.stats.requests += 1
        try:
            if not isinstance(continuation, str):
                raise ValueError(f"continuation must be a string, got {type(continuation).__name__}")
            msgs = _wire_messages(request, self.image_policy)
            (base, base_ids), (full, full_ids) = await asyncio.gather(
                self._prompt_logprobs(msgs, continue_final=False),
                self._prompt_logprobs(
                    msgs + [{"role": "assistant", "content": continuation}], continue_final=True
                ),
            )
        except Exception as e:
            self.stats.failures += 1
            return LogProbResult(
                None, str(e) if isinstance(e, JudgeHTTPError) else f"{type(e).__name__}: {e}"
            )
        if base_ids is not None and full_ids is not None:
            common = 0
            for a, b in zip(base_ids, full_ids, strict=False):
                if a != b:
                    break
                common += 1
            k = len(full) - common
        else:
            k = len(full) - len(base)
        if k <= 0:
            if continuation:
                self.stats.failures += 1
                return LogProbResult(None, "continuation added no tokens")
            return LogProbResult([], None)
        tail = full[-k:]
        if any(v is None for v in tail):
            self.stats.failures += 1
            return LogProbResult(None, "server returned no log-prob for some continuation tokens")
        return LogProbResult([float(v) for v in tail])  # type: ignore[arg-type]

    def logprob(self, requests: Sequence[RequestLike], continuations: Sequence[str]) -> list[LogProbResult]:
        if len(requests) != len(continuations):
            raise ValueError(f"{len(requests)} requests but {len(continuations)} continuations")

        async def run() -> list[LogProbResult]:
            return list(
                await asyncio.gather(
                    *(self._alogprob(r, c) for r, c in zip(requests, continuations, strict=True))
                )
            )

        try:
            return self._loop.run(run())
        except CancelledError:
            self.stats.failures += len(requests)
            return [LogProbResult(None, "cancelled: the judge backend was closed") for _ in requests]

    def close(self) -> None:
        """Cancel the calls in flight (their requests end as failed Generations at once:
        a server's shutdown must not wait for the judge's timeouts), then close."""
        if self._client is not None:
            client = self._client
            with contextlib.suppress(Exception):
                self._loop.run(self._cancel_in_flight())
                self._loop.run(client.close())
            self._client = None
        self._loop.close()

    @staticmethod
    async def _cancel_in_flight() -> None:
        me = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not me:
                task.cancel()


__all__ = ["JudgeHTTPError", "OpenAIBackend"]
