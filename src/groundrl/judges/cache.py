"""An optional on-disk response cache (sqlite), keyed by (model, request, sampling
parameters, sample index). Images enter the key by a hash of their pixels.

``model`` is the name the backend was given (a served model name, or a local path for
the transformers backend): rebuilding a different model under the same name or path
needs a fresh cache file. ``n`` is not part of the key, so asking for 4 samples after 8
were cached reuses samples 0–3.

The cache is an optimisation, never a reason to lose an answer [issue 42: a failed cache
write discarded the judge's good answers]: a read that fails is a miss, a write that
fails (disk full, a locked or read-only file) is counted (``read_failures``,
``write_failures``) and logged once per cache, and the answers go back to the caller."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import TypedDict

from groundrl.judges.base import ChatMessage, RequestLike, SamplingParams
from groundrl.judges.images import image_digest, map_content

log = logging.getLogger("groundrl.judges")


class _KeyPart(TypedDict, total=False):
    """A content part as it enters a cache key: an image by its digest, or text."""

    image: str
    text: str


def _canonical(request: RequestLike) -> list[ChatMessage[_KeyPart]]:
    return map_content(request, lambda img: {"image": image_digest(img)}, lambda t: {"text": t})


def cache_key(model: str, request: RequestLike, params: SamplingParams, index: int) -> str:
    blob = json.dumps([model, _canonical(request), params.key(), index], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def lookup(
    cache: ResponseCache | None, model: str, request: RequestLike, params: SamplingParams
) -> tuple[list[str], list[str] | None]:
    """``(keys, texts)`` for a request's ``params.n`` samples: ``texts`` when every sample
    is cached, else ``None`` (the request is generated again, all samples). No cache: ``([], None)``."""
    if cache is None:
        return [], None
    keys = [cache_key(model, request, params, i) for i in range(params.n)]
    texts = [t for t in (cache.get(k) for k in keys) if t is not None]
    return keys, (texts if len(texts) == len(keys) else None)


def store(cache: ResponseCache | None, keys: list[str], texts: list[str]) -> None:
    """Cache sample ``i`` under ``keys[i]``."""
    if cache is not None:
        for k, t in zip(keys, texts, strict=False):
            cache.put(k, t)


def as_cache(cache: ResponseCache | str | Path | None) -> ResponseCache | None:
    """A backend's ``cache=`` option: a :class:`ResponseCache`, a sqlite path, or ``None``."""
    if cache is None or isinstance(cache, ResponseCache):
        return cache
    if isinstance(cache, (str, Path)):
        return ResponseCache(cache)
    raise ValueError(f"cache must be a sqlite path or a ResponseCache, got {type(cache).__name__}")


class ResponseCache:
    """Thread-safe sqlite cache of generated texts."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.read_failures = self.write_failures = 0
        self._warned = False
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> str | None:
        """The cached text, or None (not cached, or the read failed: a miss)."""
        with self._lock:
            try:
                row = self._db.execute("SELECT text FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as e:
                self.read_failures += 1
                self._warn("read", e)
                return None
        return row[0] if row else None

    def put(self, key: str, text: str) -> bool:
        """Store ``text``; False when the write failed (counted, logged once, not raised)."""
        with self._lock:
            try:
                self._db.execute("INSERT OR REPLACE INTO responses (key, text) VALUES (?, ?)", (key, text))
                self._db.commit()
            except sqlite3.Error as e:
                self.write_failures += 1
                self._warn("write", e)
                with contextlib.suppress(sqlite3.Error):
                    self._db.rollback()
                return False
        return True

    def _warn(self, what: str, e: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning("judge cache %s: %s failed (%s); answers are kept, not cached", self.path, what, e)

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
