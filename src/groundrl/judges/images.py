"""Images in judge requests: anything a user might pass → PIL image or data URL."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path
from typing import Any

_DATA_PREFIX = "data:"


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
    request: list[dict[str, Any]], image_part: Any, text_part: Any = None
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


def to_pil(image: Any) -> Any:
    """PIL image from a PIL image, a path, a data URL, base64 text or bytes. Remote
    URLs are not fetched (no network here): they raise ``ValueError``."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    if isinstance(image, (bytes, bytearray)):
        return Image.open(io.BytesIO(image)).convert("RGB")
    if isinstance(image, (str, Path)):
        s = str(image)
        if s.startswith(_DATA_PREFIX):
            return Image.open(io.BytesIO(base64.b64decode(s.split(",", 1)[1]))).convert("RGB")
        if s.startswith(("http://", "https://")):
            raise ValueError(
                f"remote image URLs are passed through to HTTP judges only, not fetched: {s[:60]}"
            )
        p = Path(s)
        if p.is_file():
            return Image.open(p).convert("RGB")
        try:
            return Image.open(io.BytesIO(base64.b64decode(s, validate=True))).convert("RGB")
        except Exception as e:
            raise ValueError(f"image is neither a file, a data URL nor base64: {s[:60]}") from e
    raise ValueError(f"unsupported image type {type(image).__name__}")


def to_data_url(image: Any) -> str:
    """A ``data:image/png;base64,…`` URL (http(s) URLs pass through unchanged)."""
    if isinstance(image, str) and image.startswith(("http://", "https://", _DATA_PREFIX)):
        return image
    buf = io.BytesIO()
    to_pil(image).save(buf, format="PNG")
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
