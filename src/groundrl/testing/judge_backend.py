"""``make_backend(kind, model, url, **options)``: a judge backend from Python, with the
backends' own keyword options (``backoff``, ``extra_body``, ``max_retries``, …).

The CLI, train YAML files, the adapters and the server go through
:class:`groundrl.judges.config.JudgeConfig` instead (one list of settings, which also
generates every command's ``--judge-*`` flags); this function is the direct constructor
for tests and benchmark scripts that need a backend option JudgeConfig does not carry.
No product code uses it, so it lives in :mod:`groundrl.testing` (issue 40 item 3; it was
``groundrl.judges.factory``, re-exported as ``groundrl.judges.make_backend``)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from typing import Any

from groundrl.judges.base import JudgeBackend
from groundrl.judges.openai_backend import OpenAIBackend
from groundrl.judges.transformers_backend import TransformersBackend

BACKENDS = ("openai", "transformers")


def make_backend(kind: str, model: str | None, url: str | None = None, **options: Any) -> JudgeBackend:
    """A judge backend from its kind, model and URL plus the backend's keyword options.

    * ``openai``: ``model`` is the served model name, ``url`` the base URL ending in
      ``/v1``; options ``api_key`` (default ``$OPENAI_API_KEY``), ``concurrency`` (16),
      ``timeout`` (60 s), ``max_retries`` (3), ``backoff`` (0.5 s), ``cache``, ``extra_body``.
    * ``transformers``: ``model`` is a local checkpoint directory; options ``batch_size``
      (8), ``device``, ``cache``.

    Bad configuration (unknown kind, no model, no/invalid URL, a path that does not exist,
    an unknown option) raises here, before any request.
    """
    if kind not in BACKENDS:
        raise ValueError(f"unknown judge backend {kind!r}; choose one of {', '.join(BACKENDS)}")
    if not model:
        raise ValueError("--judge-model is required (a model name for openai, a local path for transformers)")
    if kind == "openai":
        if not url:
            raise ValueError("--judge-url is required for the openai backend, e.g. http://127.0.0.1:8000/v1")
        _check_options(OpenAIBackend, options, kind)
        return OpenAIBackend(
            model, url, api_key=options.pop("api_key", os.environ.get("OPENAI_API_KEY")), **options
        )
    _check_options(TransformersBackend, options, kind)
    return TransformersBackend(model, **options)


def _check_options(cls: type, options: Mapping[str, object], kind: str) -> None:
    # signature(cls): the constructor's parameters, without self
    allowed = [p for p in inspect.signature(cls).parameters if p not in ("model", "base_url")]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for the {kind} backend; it takes {', '.join(allowed)}"
        )
