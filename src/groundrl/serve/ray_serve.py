"""Running the reward server under Ray Serve (multi-worker, multi-node; optional extra).

    from groundrl.serve.ray_serve import deployment
    serve.run(deployment(recipe="reinforced_planning", num_replicas=8).bind())

Ray is imported only when :func:`deployment` is called.
"""

from __future__ import annotations

from typing import Any


def deployment(recipe: str | None = None, num_replicas: int = 2, **app_options: Any):
    try:
        from ray import serve
    except ImportError as e:  # pragma: no cover - exercised where ray is absent
        raise ImportError("Ray Serve is not installed: pip install 'groundrl[gpu]' (or 'ray[serve]')") from e
    from groundrl.serve.app import create_app

    app = create_app(recipe, **app_options)

    @serve.deployment(num_replicas=num_replicas)
    @serve.ingress(app)
    class GroundrlRewards:
        pass

    return GroundrlRewards
