"""``make_backend(kind, model, url)``: the CLI's ``--judge-backend/--judge-model/--judge-url``."""

from __future__ import annotations

import os
from typing import Any

from groundrl.judges.base import JudgeBackend

BACKENDS = ("openai", "transformers")


def make_backend(kind: str, model: str | None, url: str | None = None, **options: Any) -> JudgeBackend:
    if kind not in BACKENDS:
        raise ValueError(f"unknown judge backend {kind!r}; choose one of {', '.join(BACKENDS)}")
    if not model:
        raise ValueError("--judge-model is required (a model name for openai, a local path for transformers)")
    if kind == "openai":
        if not url:
            raise ValueError("--judge-url is required for the openai backend, e.g. http://127.0.0.1:8000/v1")
        from groundrl.judges.openai_backend import OpenAIBackend

        return OpenAIBackend(
            model, url, api_key=options.pop("api_key", os.environ.get("OPENAI_API_KEY")), **options
        )
    from groundrl.judges.transformers_backend import TransformersBackend

    return TransformersBackend(model, **options)
