"""The judge backend interface: batched multimodal chat generation and continuation
log-probabilities, with failures as values (never exceptions in a training step).

A *request* is an OpenAI-style message list. ``content`` is a string or a list of parts
``{"type": "text", "text": …}`` / ``{"type": "image", "image": <PIL image | path | URL |
data URL | base64 | bytes>}`` (``{"type": "image_url", "image_url": {"url": …}}`` is
accepted too).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NotRequired, Self, TypedDict, TypeVar


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImagePart(TypedDict):
    """``image``: a PIL image, path, URL, data URL, base64 text or bytes; absent in the
    placeholder a chat template renders (the transformers backend passes pixels apart)."""

    type: Literal["image"]
    image: NotRequired[object]


class ImageURL(TypedDict):
    url: str


class ImageURLPart(TypedDict):
    """The OpenAI wire form of an image (what the HTTP backend sends)."""

    type: Literal["image_url"]
    image_url: ImageURL


ContentPart = TextPart | ImagePart | ImageURLPart
PartT = TypeVar("PartT")


class ChatMessage(TypedDict, Generic[PartT]):
    """One chat message whose list content holds parts of type ``PartT``."""

    role: str
    content: str | list[PartT]


Message = ChatMessage[ContentPart]
Request = list[Message]  # a request as the prompt builders make it
# What a backend accepts: any message list (a caller's own dicts too). Its shape is
# checked where it is read (judges.images.map_content); a bad one is that request's error.
RequestLike = Sequence[Mapping[str, object]]


class SamplingKey(TypedDict):
    """The sampling settings in a cache key (:meth:`SamplingParams.key`)."""

    temperature: float
    top_p: float
    max_tokens: int
    seed: int | None


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings; ``n`` samples per request. Temperature 0 means greedy."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 256
    seed: int | None = None
    n: int = 1

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be ≥ 1, got {self.n}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be ≥ 1, got {self.max_tokens}")
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be ≥ 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

    def key(self) -> SamplingKey:
        """The settings that change an answer (``n`` excluded: samples are cached by index)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }


@dataclass
class Generation:
    """The samples for one request; a failed request has no texts and an ``error``."""

    texts: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.texts)

    @property
    def text(self) -> str | None:
        return self.texts[0] if self.texts else None


@dataclass
class LogProbResult:
    """Per-token log-probabilities of a continuation given its request."""

    token_logprobs: list[float] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.token_logprobs is not None

    @property
    def mean_token_prob(self) -> float | None:
        """Mean over continuation tokens of ``exp(log p)`` (Argos' reasoning-quality
        normalisation); ``None`` on failure or an empty continuation."""
        if not self.ok or not self.token_logprobs:
            return None
        return sum(math.exp(lp) for lp in self.token_logprobs) / len(self.token_logprobs)


@dataclass
class JudgeStats:
    requests: int = 0
    failures: int = 0
    retries: int = 0
    cache_hits: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "failures": self.failures,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
        }


class JudgeBackend(ABC):
    """Generate samples / score continuations for batches of chat requests.

    Implementations return one :class:`Generation` / :class:`LogProbResult` per request,
    in order, and put failures in ``error`` instead of raising. They take
    ``Sequence[RequestLike]`` (the prompt builders' typed :data:`Request` and a caller's
    own message dicts alike) and check each request as they read it.
    """

    model: str = ""

    def __init__(self) -> None:
        self.stats = JudgeStats()

    @abstractmethod
    def generate(
        self, requests: Sequence[RequestLike], params: SamplingParams | None = None
    ) -> list[Generation]: ...

    async def agenerate(
        self, requests: Sequence[RequestLike], params: SamplingParams | None = None
    ) -> list[Generation]:
        return await asyncio.to_thread(self.generate, requests, params)

    def logprob(self, requests: Sequence[RequestLike], continuations: Sequence[str]) -> list[LogProbResult]:
        return [
            LogProbResult(None, f"{type(self).__name__} cannot score log-probabilities") for _ in requests
        ]

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    # ``with backend:`` closes it however the block ends (an error, Ctrl-C's
    # KeyboardInterrupt); every backend, a plugin's too, gets this from the base class.
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BackgroundLoop:
    """A private event loop in a daemon thread, so synchronous callers (TRL reward
    functions, the CLI) can run async clients whether or not a loop is already running
    in their own thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="groundrl-judge-loop", daemon=True)
        self._thread.start()
        self.closed = False

    def run(self, coro: Any) -> Any:
        if self.closed:  # a stopped loop never runs it: the caller would wait forever
            coro.close()
            raise concurrent.futures.CancelledError("the judge loop is closed")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.closed = True
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)


def text_of(request: RequestLike) -> str:
    """All text of a request (for logging and cache keys)."""
    out = []
    for m in request:
        c = m.get("content", "")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out.extend(t for p in c if isinstance(p, dict) and isinstance(t := p.get("text", ""), str))
    return "\n".join(out)
