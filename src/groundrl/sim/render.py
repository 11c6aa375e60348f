"""A simple top-down PIL drawing of a scene: receptacles as labelled boxes in a grid,
their contents listed inside, the agent as a dot, so VLM policies get pixels."""

from __future__ import annotations

from typing import Any

from groundrl.sim.world import Env


def render_scene(env: Env, size: int = 448) -> Any:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (size, size), (245, 242, 235))
    draw = ImageDraw.Draw(img)
    tops = [i for i in env.order if env.parent[i] is None and i != env.held]
    cols = max(1, int(len(tops) ** 0.5 + 0.999))
    cell = size // cols
    agent_spot = env.spot(env.at) if env.at else None
    for k, oid in enumerate(tops):
        x, y = (k % cols) * cell, (k // cols) * cell
        closed = oid in env.opened or not env.props(oid)["openable"]
        draw.rectangle(
            [x + 3, y + 3, x + cell - 3, y + cell - 3],
            outline=(60, 60, 60),
            fill=(220, 230, 245) if closed else (200, 200, 200),
        )
        draw.text((x + 6, y + 5), env.type_of[oid], fill=(0, 0, 0))
        inside = [env.type_of[c] for c in env.descendants(oid)]
        for j, name in enumerate(inside[:4]):
            draw.text((x + 10, y + 18 + 11 * j), "- " + name, fill=(90, 40, 0))
        if oid == agent_spot:
            draw.ellipse([x + cell - 18, y + cell - 18, x + cell - 6, y + cell - 6], fill=(200, 30, 30))
    if env.held:
        draw.text((6, size - 14), f"holding: {env.type_of[env.held]}", fill=(200, 30, 30))
    return img
