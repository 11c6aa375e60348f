"""The production reward server: ``/score`` (groundrl's protocol), ``/get_reward``
(OpenRLHF), ``/health``, ``/metrics`` — micro-batched, bounded, authenticated.

``create_app`` (:mod:`groundrl.serve.app`) builds the FastAPI app; ``groundrl serve``
runs it with uvicorn; :mod:`groundrl.serve.ray_serve` runs it under Ray Serve. FastAPI,
uvicorn and Ray (the ``serve`` / ``gpu`` extras) are imported only by those modules, so
``import groundrl.serve`` is free.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "build_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        # lazy: the package's lazy facade: serve.app brings FastAPI
        from groundrl.serve.app import create_app

        return create_app
    if name == "build_app":
        # lazy: the package's lazy facade: serve.factory brings FastAPI
        from groundrl.serve.factory import build_app

        return build_app
    raise AttributeError(f"module 'groundrl.serve' has no attribute {name!r}")
