"""The top-down drawing: deterministic pixels that follow the state (agent, colours,
lamps), spatial positions drawn left to right."""

from __future__ import annotations

import pytest

from groundrl.sim.generate import generate_tasks
from groundrl.sim.render import render_scene
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Obj, Scene

AGENT = (210, 30, 30)
LAMP_ON = (255, 200, 0)


def count(img, rgb) -> int:
    return len(xs_of(img, rgb))


def xs_of(img, rgb) -> list[int]:
    w = img.size[0]
    data = img.tobytes()
    out = []
    for k in range(0, len(data), 3):
        if (data[k], data[k + 1], data[k + 2]) == rgb:
            out.append((k // 3) % w)
    return out


def test_size_mode_and_determinism():
    task = generate_tasks(1, seed=2)[0]
    a, b = render_scene(task.env()), render_scene(task.env())
    assert a.size == (448, 448) and a.mode == "RGB"
    assert a.tobytes() == b.tobytes()
    assert render_scene(task.scene, size=300).size == (300, 300)  # a Scene works too
    with pytest.raises(ValueError, match="size"):
        render_scene(task.env(), size=10)


def test_the_agent_appears_where_it_went():
    scene = Scene("kitchen", [Obj("CounterTop_1", "CounterTop"), Obj("Fridge_1", "Fridge")])
    env = Env(scene)
    before = render_scene(env)
    assert count(before, AGENT) == 0  # not moved yet
    env.step(Skill("find", "Fridge"))
    at_fridge = render_scene(env)
    env.step(Skill("find", "CounterTop"))
    at_counter = render_scene(env)
    assert count(at_fridge, AGENT) > 20 and count(at_counter, AGENT) > 20
    # two boxes side by side: CounterTop left, Fridge right
    assert min(xs_of(at_fridge, AGENT)) > 224 > max(xs_of(at_counter, AGENT))


def test_colour_attributes_and_lamps_are_drawn():
    objs = [
        Obj("Desk_1", "Desk"),
        Obj("DeskLamp_1", "DeskLamp", "Desk_1"),
        Obj("Book_1", "Book", "Desk_1", {"color": "red"}),
    ]
    env = Env(Scene("bedroom", objs))
    img = render_scene(env)
    assert count(img, (255, 0, 0)) > 50  # the red book's chip
    assert count(img, LAMP_ON) == 0
    env.step(Skill("find", "DeskLamp"))
    env.step(Skill("toggle_on", "DeskLamp"))
    assert count(render_scene(env), LAMP_ON) > 0


def test_spatial_positions_go_left_to_right():
    # listed right-first: without positions the right one's shelf would be drawn first (left)
    objs = [
        Obj("Shelf_1", "Shelf"),
        Obj("Shelf_2", "Shelf"),
        Obj("CounterTop_1", "CounterTop"),
        Obj("Mug_1", "Mug", "Shelf_1", {"color": "blue", "position": "on the right"}),
        Obj("Mug_2", "Mug", "Shelf_2", {"color": "red", "position": "on the left"}),
    ]
    img = render_scene(Env(Scene("kitchen", objs)))
    red, blue = xs_of(img, (255, 0, 0)), xs_of(img, (0, 0, 255))
    assert red and blue and max(red) < min(blue)
