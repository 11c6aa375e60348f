"""Images in judge requests: anything a user might pass → PIL image or data URL."""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DATA_PREFIX = "data:"
_URL_PREFIXES = ("http://", "https://")


@dataclass(frozen=True)
class ImagePolicy:
    """Which image references a judge backend may follow, checked before anything is read.

    * in-memory images, bytes, ``data:`` URLs and base64 text: always;
    * local paths: when ``allow_local`` (the CLI, a user's own files), and then only under
      ``root`` when one is set; the reward server sets ``allow_local=False`` unless its
      judge configuration names a root, so a request cannot make it read a file;
    * ``http(s)`` URLs: only with ``allow_urls`` (they are passed to the judge server,
      which may fetch them: a relay a client should not get by default).

    A refused image is that request's error (its part gets the fallback, counted once).
    """

    allow_local: bool = True
    root: str | None = None
    allow_urls: bool = False

    def classify(self, s: str) -> str:
        """``"data"``, ``"url"``, ``"path"`` or ``"base64"`` for a string image, deciding
        without touching the disk unless a local path is allowed; refused references
        raise ``ValueError`` (the message never carries file contents)."""
        if s.startswith(_DATA_PREFIX):
            return "data"
        if s.startswith(_URL_PREFIXES):
            if not self.allow_urls:
                raise ValueError(
                    "remote image URLs are off for this judge (set allow_image_urls to pass them on)"
                )
            return "url"
        if self.allow_local:
            p = Path(s)
            inside = self.root is None or p.resolve().is_relative_to(Path(self.root).resolve())
            if inside and p.is_file():
                return "path"
            if not inside and not _base64_text(s):
                raise ValueError(f"image path outside the allowed image root {self.root}")
        if _base64_text(s):
            return "base64"
        if not self.allow_local:
            raise ValueError(
                "local image paths are not read here; send the image inline (a data URL or base64)"
            )
        raise ValueError(f"image is neither a file, a data URL nor base64: {s[:60]}")

    def check(self, image: Any) -> None:
        if isinstance(image, (str, Path)):
            self.classify(str(image))

    def check_request(self, request: Any) -> None:
        """Raise ``ValueError`` for the first image of ``request`` this policy refuses."""
        if isinstance(request, (list, tuple)):

            def checked(image: Any) -> dict[str, Any]:
                self.check(image)
                return {}

            map_content(request, checked)


OPEN = ImagePolicy()


def _base64_text(s: str) -> bool:
    if not s or len(s) % 4:
        return False
    try:
        base64.b64decode(s, validate=True)
    except ValueError:
        return False
    return True


def image_of(part: dict[str, Any]) -> Any | None:
    """The image value of a content part, or ``None`` for text parts."""
    if not isinstance(part, dict):
        return None
    if part.get("type") == "image_url":
        url = part.get("image_url")
        return url.get("url") if isinstance(url, dict) else url
    if part.get("type") == "image" or "image" in part:
        return part.get("image")
    return None


def map_content(
    request: Sequence[dict[str, Any]], image_part: Any, text_part: Any = None
) -> list[dict[str, Any]]:
    """A request with each list-content part mapped: images through ``image_part(image)``,
    text through ``text_part(text)`` (default: kept as a text part). String contents and
    roles pass through; ``None`` content is empty text; parts that are neither text nor
    image are dropped. Every backend and the cache read requests through this; a request
    that is not a list of message dicts raises ``ValueError`` (the backends turn it into
    that request's error)."""
    text_part = text_part or (lambda t: {"type": "text", "text": t})
    if not isinstance(request, (list, tuple)):
        raise ValueError(f"a request is a list of chat messages, got {type(request).__name__}")
    out = []
    for m in request:
        if not isinstance(m, dict):
            raise ValueError(f"a chat message is a dict with 'role' and 'content', got {type(m).__name__}")
        c = m.get("content")
        if c is None:
            c = ""
        elif isinstance(c, list):
            parts = []
            for p in c:
                img = image_of(p)
                if img is not None:
                    parts.append(image_part(img))
                elif isinstance(p, dict) and p.get("type") == "text":
                    parts.append(text_part(str(p.get("text") or "")))
            c = parts
        elif not isinstance(c, str):
            raise ValueError(f"message content must be a string or a list of parts, got {type(c).__name__}")
        out.append({"role": str(m.get("role") or "user"), "content": c})
    return out


def to_pil(image: Any, policy: ImagePolicy = OPEN) -> Any:
    """PIL image from a PIL image, a path, a data URL, base64 text or bytes, as far as
    ``policy`` allows. Remote URLs are never fetched here: they raise ``ValueError``."""
    # lazy: Pillow loads only when an image is handled
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    if isinstance(image, (bytes, bytearray)):
        return Image.open(io.BytesIO(image)).convert("RGB")
    if isinstance(image, (str, Path)):
        s = str(image)
        kind = ImagePolicy(policy.allow_local, policy.root, allow_urls=True).classify(s)
        if kind == "url":
            raise ValueError(
                f"remote image URLs are passed through to HTTP judges only, not fetched: {s[:60]}"
            )
        if kind == "path":
            return Image.open(s).convert("RGB")
        raw = s.split(",", 1)[1] if kind == "data" else s
        try:
            return Image.open(io.BytesIO(base64.b64decode(raw))).convert("RGB")
        except Exception as e:
            raise ValueError(f"image data is not a readable image: {s[:60]}") from e
    raise ValueError(f"unsupported image type {type(image).__name__}")


def to_data_url(image: Any, policy: ImagePolicy = OPEN) -> str:
    """A ``data:image/png;base64,…`` URL; http(s) URLs pass through unchanged when
    ``policy.allow_urls``, and raise otherwise."""
    if isinstance(image, str) and image.startswith(_URL_PREFIXES):
        policy.check(image)
        return image
    if isinstance(image, str) and image.startswith(_DATA_PREFIX):
        return image
    buf = io.BytesIO()
    to_pil(image, policy).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def image_digest(image: Any) -> str:
    """A stable hash of an image's pixels (or of its URL) for cache keys."""
    if isinstance(image, str) and image.startswith(("http://", "https://")):
        return "url:" + image
    try:
        pil = to_pil(image)
    except Exception:
        return "unreadable:" + hashlib.sha256(repr(image).encode()).hexdigest()
    h = hashlib.sha256(pil.tobytes())
    h.update(repr(pil.size).encode())
    return h.hexdigest()
