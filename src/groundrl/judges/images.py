"""Images in judge requests: anything a user might pass → PIL image or data URL.

Inline images (``data:`` URLs and base64 text) are bounded before they are decoded
[issue 42: every base64 image over ~4 KB was refused as "File name too long", and one of
0.66 MB cost the server 36–42 s and 1.3 GB]: a string longer than a path can be is never
probed as a file; the text may be at most :data:`MAX_INLINE_IMAGE_BYTES`; it is decoded
once, and the image header's size is checked against :data:`MAX_IMAGE_PIXELS` before any
pixel is decoded. An image sent to an HTTP judge keeps its original bytes (no re-encoding).
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from groundrl.judges.base import ChatMessage, ImagePart, RequestLike, TextPart

P = TypeVar("P")

_DATA_PREFIX = "data:"
_URL_PREFIXES = ("http://", "https://")
# [ours] the text of one inline image (data URL or base64): the server's body limit is
# 16 MiB, and a judge prompt holds several frames
MAX_INLINE_IMAGE_BYTES = 8 * 1024 * 1024
# [ours] 32 Mpx (e.g. 8192 × 4096): far past the ~12.8 Mpx a Qwen2.5-VL processor keeps
# by default, and under Pillow's own decompression-bomb limit (~179 Mpx)
MAX_IMAGE_PIXELS = 1 << 25
_PATH_MAX = 4096  # Linux PATH_MAX: a longer string names no file
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")  # fullmatch: linear, nothing decoded


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
        without touching the disk unless a local path is allowed (and then only for a
        string that can name a file); refused references raise ``ValueError`` (the
        message never carries file contents). Inline images over
        :data:`MAX_INLINE_IMAGE_BYTES` are refused here, before they are decoded."""
        if s.startswith(_DATA_PREFIX):
            _check_inline_size(s)
            return "data"
        if s.startswith(_URL_PREFIXES):
            if not self.allow_urls:
                raise ValueError(
                    "remote image URLs are off for this judge (set allow_image_urls to pass them on)"
                )
            return "url"
        if self.allow_local and len(s) <= _PATH_MAX and "\0" not in s:
            inside, is_file = self._local(s)
            if inside and is_file:
                return "path"
            if not inside and not _base64_text(s):
                raise ValueError(f"image path outside the allowed image root {self.root}")
        if _base64_text(s):
            _check_inline_size(s)
            return "base64"
        if not self.allow_local:
            raise ValueError(
                "local image paths are not read here; send the image inline (a data URL or base64)"
            )
        raise ValueError(f"image is neither a file, a data URL nor base64: {s[:60]}")

    def _local(self, s: str) -> tuple[bool, bool]:
        """(inside the root, is a file); a string the OS cannot take as a path (a name
        over 255 bytes: ENAMETOOLONG) is no file."""
        p = Path(s)
        try:
            inside = self.root is None or p.resolve().is_relative_to(Path(self.root).resolve())
            return inside, inside and p.is_file()
        except (OSError, ValueError):
            return True, False

    def check(self, image: Any) -> None:
        if isinstance(image, (str, Path)):
            self.classify(str(image))

    def check_request(self, request: Any) -> None:
        """Raise ``ValueError`` for the first image of ``request`` this policy refuses."""
        if isinstance(request, (list, tuple)):

            def checked(image: Any) -> ImagePart:
                self.check(image)
                return {"type": "image"}  # discarded: only the check matters

            map_content(request, checked, text_part)


OPEN = ImagePolicy()


def _base64_text(s: str) -> bool:
    """Base64 text by its alphabet and length alone (decoding is left to the one use)."""
    return bool(s) and len(s) % 4 == 0 and _BASE64.fullmatch(s) is not None


def _check_inline_size(s: str) -> None:
    if len(s) > MAX_INLINE_IMAGE_BYTES:
        raise ValueError(
            f"inline image of {len(s)} bytes is over the {MAX_INLINE_IMAGE_BYTES}-byte limit; "
            "send a smaller (resized or recompressed) image"
        )


def _inline_bytes(s: str, kind: str) -> bytes:
    """The decoded bytes of a data URL or base64 text (decoded here, once)."""
    raw = s.split(",", 1)[1] if kind == "data" else s
    if kind == "data" and ";base64" not in s.split(",", 1)[0]:
        raise ValueError(f"only base64 data URLs are read: {s[:60]}")
    try:
        return base64.b64decode(raw)
    except ValueError as e:
        raise ValueError(f"image data is not base64: {s[:60]}") from e


def _open(source: Any, what: str) -> Any:
    """A lazily opened PIL image whose header says at most :data:`MAX_IMAGE_PIXELS`
    pixels (nothing past the header is decoded here)."""
    # lazy: Pillow loads only when an image is handled
    from PIL import Image

    try:
        im = Image.open(source)
    except Exception as e:
        raise ValueError(f"image data is not a readable image: {what[:60]}") from e
    w, h = im.size
    if w * h > MAX_IMAGE_PIXELS:
        raise ValueError(f"image of {w} × {h} pixels is over the {MAX_IMAGE_PIXELS}-pixel limit")
    return im


def _rgb(im: Any, what: str) -> Any:
    try:
        return im.convert("RGB")
    except Exception as e:
        raise ValueError(f"image data is not a readable image: {what[:60]}") from e


def image_of(part: object) -> object | None:
    """The image value of a content part, or ``None`` for text parts (and non-parts)."""
    if not isinstance(part, dict):
        return None
    if part.get("type") == "image_url":
        url = part.get("image_url")
        return url.get("url") if isinstance(url, dict) else url
    if part.get("type") == "image" or "image" in part:
        return part.get("image")
    return None


def text_part(text: str) -> TextPart:
    """A text content part (what :func:`map_content` keeps text as, for the backends)."""
    return {"type": "text", "text": text}


def map_content(
    request: RequestLike, image_part: Callable[[Any], P], text_part: Callable[[str], P]
) -> list[ChatMessage[P]]:
    """A request with each list-content part mapped: images through ``image_part(image)``,
    text through ``text_part(text)`` (:func:`text_part` keeps it a text part). String
    contents and roles pass through; ``None`` content is empty text; parts that are
    neither text nor image are dropped. Every backend and the cache read requests through
    this; a request that is not a list of message dicts raises ``ValueError`` (the
    backends turn it into that request's error)."""
    if not isinstance(request, (list, tuple)):
        raise ValueError(f"a request is a list of chat messages, got {type(request).__name__}")
    out: list[ChatMessage[P]] = []
    for m in request:
        if not isinstance(m, dict):
            raise ValueError(f"a chat message is a dict with 'role' and 'content', got {type(m).__name__}")
        c = m.get("content")
        mapped: str | list[P]
        if c is None:
            mapped = ""
        elif isinstance(c, list):
            mapped = []
            for p in c:
                img = image_of(p)
                if img is not None:
                    mapped.append(image_part(img))
                elif isinstance(p, dict) and p.get("type") == "text":
                    mapped.append(text_part(str(p.get("text") or "")))
        elif isinstance(c, str):
            mapped = c
        else:
            raise ValueError(f"message content must be a string or a list of parts, got {type(c).__name__}")
        out.append({"role": str(m.get("role") or "user"), "content": mapped})
    return out


def to_pil(image: Any, policy: ImagePolicy = OPEN) -> Any:
    """PIL image from a PIL image, a path, a data URL, base64 text or bytes, as far as
    ``policy`` allows, each at most :data:`MAX_IMAGE_PIXELS` pixels (checked on the
    header, before decoding). Remote URLs are never fetched here: they raise ``ValueError``."""
    # lazy: Pillow loads only when an image is handled
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    if isinstance(image, (bytes, bytearray)):
        return _rgb(_open(io.BytesIO(image), "bytes"), "bytes")
    if isinstance(image, (str, Path)):
        s = str(image)
        kind = ImagePolicy(policy.allow_local, policy.root, allow_urls=True).classify(s)
        if kind == "url":
            raise ValueError(
                f"remote image URLs are passed through to HTTP judges only, not fetched: {s[:60]}"
            )
        if kind == "path":
            return _rgb(_open(s, s), s)
        return _rgb(_open(io.BytesIO(_inline_bytes(s, kind)), s), s)
    raise ValueError(f"unsupported image type {type(image).__name__}")


def to_data_url(image: Any, policy: ImagePolicy = OPEN) -> str:
    """A data URL for an HTTP judge; http(s) URLs pass through unchanged when
    ``policy.allow_urls``, and raise otherwise. Inline images keep their bytes: a base64
    data URL is checked (size, header, pixels) and passed on as it is, base64 text gets
    the ``data:`` prefix of its format; other images are encoded as PNG."""
    if isinstance(image, str) and image.startswith(_URL_PREFIXES):
        policy.check(image)
        return image
    if isinstance(image, str) and (image.startswith(_DATA_PREFIX) or _base64_text(image)):
        kind = policy.classify(image)
        if kind in ("data", "base64"):
            if kind == "data" and ";base64" not in image.split(",", 1)[0]:
                return image  # e.g. an SVG data URL: passed on as before, Pillow cannot read it
            im = _open(io.BytesIO(_inline_bytes(image, kind)), image)
            if kind == "data":
                return image
            return f"data:{_mime(im.format)};base64,{image}"
    buf = io.BytesIO()
    to_pil(image, policy).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _mime(fmt: str | None) -> str:
    # lazy: Pillow loads only when an image is handled
    from PIL import Image

    return Image.MIME.get(fmt or "", "image/png")


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
