"""A top-down drawing of the live scene (PIL), so VLM policies get pixels.

Layout (deterministic: the same state always gives the same pixels):

* a title strip with the room type, a status strip with what the agent holds and
  where it stands;
* every top-level receptacle or object is a labelled box in a grid (a type with
  several instances is numbered: ``Cabinet 2``); a closed container is dark with a
  ``closed`` tag, an open one light; an appliance or lamp that is on gets a yellow
  frame and an ``on`` tag;
* what is in or on a box is listed inside as chips, filled with the object's colour
  attribute when it has one (visual-appearance tasks), marked ``sliced`` / ``clean`` /
  ``hot`` / ``cold``, yellow when switched on;
* objects with a ``position`` attribute (spatial tasks) put their box in the left,
  middle or right column, so "the one on the left" is on the left in the image;
* labels carry what the text state says of an object: its looks ("yellow plastic
  small") and, for a type with several instances, its id and place ("Cabinet_1
  [bottom, under the SinkBasin]"), cut to fit the box;
* the agent is a red disc in the box it stands at.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from groundrl.sim.world import Env, Scene

_BG = (238, 234, 226)
_STRIP = (52, 58, 64)
_BOX_OPEN = (214, 226, 240)
_BOX_CLOSED = (120, 132, 150)
_BOX_PLAIN = (228, 222, 206)
_CHIP = (250, 246, 236)
_AGENT = (210, 30, 30)
_ON = (255, 200, 0)
_COLUMN = {"on the left": 0, "in the middle": 1, "on the right": 2}


@lru_cache(maxsize=8)
def _font(px: int) -> Any:
    # lazy: Pillow loads only when an image is handled
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=px)
    except (TypeError, OSError, ImportError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def _rgb(name: str | None) -> tuple[int, int, int] | None:
    if not name:
        return None
    # lazy: Pillow loads only when an image is handled
    from PIL import ImageColor

    try:
        c = ImageColor.getrgb(name)
    except ValueError:
        return None
    return c[:3]


def _fit(draw: Any, text: str, font: Any, width: float) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def _layout(env: Env, tops: list[str]) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Grid cell (row, col) per top-level id; spatial ``position`` attributes pick the
    column (left / middle / right of three or more)."""
    want: dict[str, int] = {}
    for oid in tops:
        for d in [oid, *env.descendants(oid)]:
            pos = env.static[d].attrs.get("position") if d in env.static else None
            if pos in _COLUMN:
                want.setdefault(oid, _COLUMN[pos])
    n = len(tops)
    cols = max(1, math.ceil(math.sqrt(n)))
    if want:
        cols = max(cols, 3)
    per_col: dict[int, int] = {}
    for c in want.values():
        per_col[c] = per_col.get(c, 0) + 1
    rows = max(math.ceil(n / cols), *per_col.values(), 1)
    # the wanted columns map left / middle / right onto the first / centre / last column
    real = {0: 0, 1: cols // 2, 2: cols - 1}
    taken: set[tuple[int, int]] = set()
    cells: dict[str, tuple[int, int]] = {}
    for oid in tops:
        if oid in want:
            c = real[want[oid]]
            r = next(r for r in range(rows) if (r, c) not in taken)
            cells[oid] = (r, c)
            taken.add((r, c))
    free = ((r, c) for r in range(rows + 1) for c in range(cols) if (r, c) not in taken)
    for oid in tops:
        if oid not in cells:
            cells[oid] = next(free)
    rows = max(r for r, _ in cells.values()) + 1 if cells else 1
    return cells, rows, cols


def _names(env: Env) -> dict[str, str]:
    """Display names: the type, numbered when the scene has several of it."""
    count: dict[str, int] = {}
    out = {}
    for i in env.order:
        t = env.type_of[i]
        count[t] = count.get(t, 0) + 1
    seen: dict[str, int] = {}
    for i in env.order:
        t = env.type_of[i]
        seen[t] = seen.get(t, 0) + 1
        out[i] = f"{t} {seen[t]}" if count[t] > 1 else t
    return out


def _flags(env: Env, oid: str) -> list[str]:
    """The states shown on an object's chip, in a fixed order."""
    sets = (("sliced", env.sliced), ("clean", env.clean), ("hot", env.hot), ("cold", env.cool))
    return [w for w, s in sets if oid in s] + (["on"] if oid in env.on else [])


def render_scene(state: Env | Scene, size: int = 448) -> Any:
    """The scene (or a live episode's state) as a ``size``×``size`` RGB PIL image."""
    # lazy: Pillow loads only when an image is handled
    from PIL import Image, ImageDraw

    if size < 64:
        raise ValueError(f"render size must be ≥ 64 pixels, got {size}")
    env = state if isinstance(state, Env) else Env(state)
    img = Image.new("RGB", (size, size), _BG)
    draw = ImageDraw.Draw(img)
    fs = max(8, size // 40)
    font, small = _font(fs), _font(max(7, fs - 2))
    strip = fs + 8
    names = _names(env)
    shown_as = env._display_names()  # looks and place, as the text state words them
    names = {i: shown_as.get(i, n) for i, n in names.items()}

    title = f"{env.scene.room.replace('_', ' ')}" + (
        f"  (FloorPlan {env.scene.floorplan})" if env.scene.floorplan else ""
    )
    draw.rectangle([0, 0, size, strip], fill=_STRIP)
    draw.text((6, 4), _fit(draw, title, font, size - 12), fill=(255, 255, 255), font=font)
    status = (
        f"holding: {names[env.held]}" if env.held else "hand empty"
    ) + f"   at: {names[env.at] if env.at else 'start'}   step {env.steps}"
    draw.rectangle([0, size - strip, size, size], fill=_STRIP)
    draw.text((6, size - strip + 4), _fit(draw, status, font, size - 12), fill=(255, 255, 255), font=font)

    tops = [i for i in env.order if env.parent[i] is None and i != env.held]
    cells, rows, cols = _layout(env, tops)
    top, bottom = strip + 4, size - strip - 4
    cw, ch = (size - 8) / cols, (bottom - top) / rows
    agent_spot = env.spot(env.at) if env.at else None
    for oid, (r, c) in cells.items():
        x0, y0 = 4 + c * cw + 2, top + r * ch + 2
        x1, y1 = x0 + cw - 4, y0 + ch - 4
        p = env.props(oid)
        closed = p["openable"] and oid not in env.opened
        fill = _BOX_CLOSED if closed else (_BOX_OPEN if p["openable"] else _BOX_PLAIN)
        on = oid in env.on
        draw.rectangle([x0, y0, x1, y1], fill=fill, outline=_ON if on else (60, 60, 60), width=3 if on else 1)
        text_col = (255, 255, 255) if closed else (20, 20, 20)
        tags = " ".join(x for x, cond in (("closed", closed), ("on", on)) if cond)
        label = names[oid] + (f" [{tags}]" if tags else "")
        draw.text((x0 + 4, y0 + 3), _fit(draw, label, font, x1 - x0 - 8), fill=text_col, font=font)
        y = y0 + fs + 7
        inside = [d for d in env.descendants(oid) if d != env.held]
        line = fs + 3
        room_for = max(0, int((y1 - y - 2) // line))
        shown = inside if len(inside) <= room_for else inside[: max(0, room_for - 1)]
        for d in shown:
            attrs = env.static[d].attrs if d in env.static else {}
            chip = _rgb(attrs.get("color")) or (_ON if d in env.on else _CHIP)
            dark = sum(chip) < 300
            flags = _flags(env, d)
            text = names[d] + (f" ({', '.join(flags)})" if flags else "")
            draw.rectangle([x0 + 6, y, x1 - 6, y + line - 2], fill=chip, outline=(90, 90, 90))
            draw.text(
                (x0 + 9, y + 1),
                _fit(draw, text, small, x1 - x0 - 18),
                fill=(255, 255, 255) if dark else (30, 30, 30),
                font=small,
            )
            y += line
        if len(shown) < len(inside):
            draw.text((x0 + 8, y), f"+{len(inside) - len(shown)} more", fill=text_col, font=small)
        if oid == agent_spot:
            rad = max(5, int(min(cw, ch) / 9))
            cx, cy = x1 - rad - 4, y1 - rad - 4
            draw.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], fill=_AGENT, outline=(255, 255, 255))
    return img


__all__ = ["render_scene"]
