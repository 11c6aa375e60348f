"""The reward server under Ray Serve: several replicas, several nodes (optional extra).

    from ray import serve
    from groundrl.serve.ray_serve import deployment

    serve.run(deployment("reinforced_planning", num_replicas=8,
                         options={"action_map": "/shared/map.json"}, token="…").bind())

or from the shell, with Ray's application builder::

    serve run groundrl.serve.ray_serve:app_builder recipe=eqa_rm num_replicas=4

Each replica builds its own app from the plain configuration (``serve.ingress`` with a
builder function, evaluated on the replica: judges and locks are never pickled), so it has
its own micro-batchers and queue bound (``max_queue`` is per replica). Ray Serve's proxy
spreads requests over replicas; the routes and protocols are those of ``groundrl serve``.
Needs a Ray version whose ``serve.ingress`` accepts a builder (``pip install 'ray[serve]'``).
Ray is imported only when :func:`deployment` is called; importing this module is free.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groundrl.serve.factory import build_app, check_config


def _serve() -> Any:
    try:
        # lazy: Ray is the optional gpu extra
        from ray import serve
    except ImportError as e:
        raise ImportError(
            "Ray Serve is not installed: pip install 'ray[serve]' (or 'groundrl[gpu]') to run replicas"
        ) from e
    return serve


def deployment(
    recipe: str | None = None,
    *,
    num_replicas: int = 2,
    ray_actor_options: Mapping[str, Any] | None = None,
    name: str = "groundrl_rewards",
    **config: Any,
) -> Any:
    """A Ray Serve deployment of the reward server; ``config`` holds the settings of
    :func:`groundrl.serve.factory.build_app` (``token``, ``max_batch``, ``options``, …)."""
    if not isinstance(num_replicas, int) or isinstance(num_replicas, bool) or num_replicas < 1:
        raise ValueError(f"num_replicas must be an int ≥ 1, got {num_replicas!r}")
    settings = check_config({"recipe": recipe, **config})
    serve = _serve()

    def builder():  # a plain function: Ray calls it on each replica (a partial would be taken for an app)
        return build_app(settings)

    @serve.deployment(name=name, num_replicas=num_replicas, ray_actor_options=dict(ray_actor_options or {}))
    @serve.ingress(builder)
    class GroundrlRewards:
        """Routes come from the app the builder makes on each replica."""

    return GroundrlRewards


def app_builder(args: Mapping[str, Any]) -> Any:
    """``serve run groundrl.serve.ray_serve:app_builder recipe=… num_replicas=…``: Ray
    passes ``key=value`` pairs as strings; integer settings are converted."""
    args = dict(args)
    for key in (
        "num_replicas",
        "max_batch",
        "max_queue",
        "max_body_bytes",
        "max_samples",
        "batch_concurrency",
    ):
        if key in args:
            args[key] = int(args[key])
    if "max_wait_ms" in args:
        args["max_wait_ms"] = float(args["max_wait_ms"])
    return deployment(**args).bind()
