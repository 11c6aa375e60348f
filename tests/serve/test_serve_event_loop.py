"""Issue 26 item 2: scoring never holds the event loop. A CPU-bound part runs in the
batcher's worker thread while /health is answered; a megabyte of unclosed
``<|vision_start|>`` in an OpenRLHF query is scored (the vision collapse was quadratic
and held the GIL for minutes). Latencies are measured in bench/adversarial_server.py."""

import threading
import time

import httpx

from groundrl.recipes.base import Recipe
from groundrl.rubric import Part, Rubric
from groundrl.serve.app import create_app

started, release = threading.Event(), threading.Event()
seen = {}


def spin(completion):
    """Pure-Python work until the test releases it (at most 60 s, so a bug cannot hang CI)."""
    started.set()
    end, n = time.monotonic() + 60, 0
    while not release.is_set() and time.monotonic() < end:
        n += 1
    seen["released"] = release.is_set()
    return 1.0


def test_health_is_answered_while_a_cpu_bound_part_runs(tools):
    rec = Recipe(
        name="spin",
        paper="test",
        summary="a part that spins",
        build=lambda: Rubric([Part("spin", spin)], name="spin"),
        required=(),
    )
    with tools.Running(create_app("spin", recipes={"spin": rec})) as srv:
        out = {}
        t = threading.Thread(
            target=lambda: out.update(
                r=httpx.post(srv.url + "/score", json={"samples": [{"completion": "x"}]}, timeout=120)
            )
        )
        t.start()
        assert started.wait(60)
        health = httpx.get(srv.url + "/health", timeout=60)
        release.set()  # only now may the part finish: /health was answered while it ran
        t.join(120)
    assert health.status_code == 200 and health.json()["status"] in ("ok", "degraded")
    assert seen["released"] is True
    assert out["r"].status_code == 200 and out["r"].json()["results"][0]["reward"] == 1.0


def test_a_megabyte_of_unclosed_vision_starts_is_scored(tools):
    q = "prompt" + "<|vision_start|>" * 62_500 + "<critique>ok</critique><score>7</score><|im_end|>"
    with tools.Running(create_app("eqa_rm")) as srv:
        r = httpx.post(
            srv.url + "/get_reward", json={"query": [q], "prompts": ["prompt"], "labels": [7]}, timeout=300
        )
        assert httpx.get(srv.url + "/health", timeout=60).status_code == 200
    assert r.status_code == 200, r.text
    assert r.json()["rewards"][0] > 0  # the score 7 against gold 7 is read past the vision run
